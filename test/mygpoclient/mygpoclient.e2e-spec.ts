import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

/**
 * A real client: gPodder's client library mygpoclient (Debian's python3-mygpoclient, for
 * /usr/bin/python3) drives castlog through a full sync — devices, subscription upload and download
 * with since, a second device, episode actions, the simple API, refusals — with its own classes
 * (test/mygpoclient/sync.py, which asserts what mygpoclient's callers rely on and prints a JSON line
 * per step). This spec starts castlog, creates the user, runs the script, and checks its output and
 * the state it left through the other face, /v1.
 *
 * Where /usr/bin/python3 cannot import mygpoclient the test is skipped, visibly, and says so on
 * stderr: it did not run. `.ci/run` installs the package when apt is available.
 */

const PYTHON = '/usr/bin/python3';
const SCRIPT = resolve(__dirname, 'sync.py');
const LARGE_UPLOAD = resolve(__dirname, 'large-upload.py');

const probe = spawnSync(PYTHON, ['-c', 'import mygpoclient'], { stdio: 'ignore' });
const installed = probe.error === undefined && probe.status === 0;
if (!installed)
  process.stderr.write(
    'mygpoclient is not installed: the real-client test did not run (install python3-mygpoclient)\n',
  );

/** Runs the script to its end; never throws on its exit code. */
function runSync(
  url: string,
  user: TestUser,
  script = SCRIPT,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(PYTHON, [script, url, user.name, user.password], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolveRun({ code, stdout, stderr }));
  });
}

(installed ? describe : describe.skip)('mygpoclient, the real client library, against castlog', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());

  it('syncs devices, subscriptions, episode actions and the simple API, and leaves the state /v1 shows', async () => {
    const user = await app.freshUser();
    const run = await runSync(app.url, user);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });

    const steps = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { step: string } & Record<string, unknown>);
    expect(steps.map((step) => step.step)).toEqual([
      'library',
      'devices',
      'update_subscriptions',
      'pull_subscriptions',
      'pull_subscriptions',
      'update_subscriptions',
      'pull_subscriptions',
      'devices',
      'bad_request',
      'upload_episode_actions',
      'download_episode_actions',
      'download_episode_actions',
      'download_episode_actions',
      'challenges',
      'simple',
      'pull_subscriptions',
      'unauthorized',
      'done',
    ]);
    expect(steps[0]).toEqual(
      expect.objectContaining({ user_agent: expect.stringMatching(/^mygpoclient\//) }),
    );
    // One Basic challenge for a whole sync of a dozen requests: the session cookie carried the rest.
    expect(steps.find((step) => step.step === 'challenges')).toEqual({
      step: 'challenges',
      client: 'MygPodderClient',
      count: 1,
    });
    const done = steps.at(-1) as unknown as { feeds: string[] };
    expect(done.feeds).toHaveLength(2);

    // The other face shows what mygpoclient left: exactly its two feeds subscribed.
    const listed = await app.as(user).get('/v1/subscriptions?per_page=100');
    expect(listed.status).toBe(200);
    const subscribed = listed.body.subscriptions
      .filter((item: { is_subscribed: boolean }) => item.is_subscribed)
      .map((item: { feed_url: string }) => item.feed_url)
      .sort();
    expect(subscribed).toEqual(done.feeds);
    expect(listed.body.total).toBe(5);
  }, 120_000);

  it('uploads 10,000 episode actions at once, and reads the 413 of an upload over the limit rather than a broken pipe', async () => {
    const user = await app.freshUser();
    const run = await runSync(app.url, user, LARGE_UPLOAD);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const steps = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(steps).toEqual([
      { step: 'upload_episode_actions', count: 10_000, bytes: expect.any(Number) },
      { step: 'too_large', status: 413 },
    ]);
    expect(steps[0]!.bytes).toBeGreaterThan(2_000_000);
  }, 120_000);
});
