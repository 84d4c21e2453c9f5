import { configSchema } from '@castlog/config';
import { findRunningPostgres, freePorts, startEmbeddedPostgres } from '@castlog/infra';
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScenarioOutcome } from '../report';
import { alternate } from '../rounds';
import { formatSpread, ratio, round, since, spreadOf } from '../stats';
import { targetOf } from '../targets';

export interface ColdStartOptions {
  /** The repository root: the build's `dist/apps/embedded/src/main.js` is what `npm start` runs. */
  readonly repoRoot: string;
  readonly rounds: number;
  /** castlog settings given with `--set` (`castlogSettings`). */
  readonly castlogSettings: Record<string, string>;
  readonly log: (line: string) => void;
}

const READY_TIMEOUT_MS = 120_000;
const POLL_MS = 20;

interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
}

/** `node dist/apps/embedded/src/main.js` (what `npm start` runs once its build is done) on the data
 * directory, with no DATABASE_URL or KAFKA_BROKERS: embedded PostgreSQL and the table log; of
 * castlog's other settings only `settings` (`--set`). */
function startEmbeddedCastlog(
  main: string,
  dataDir: string,
  port: number,
  settings: Record<string, string>,
): Started {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(configSchema.shape)) delete env[name];
  Object.assign(env, { LOG_LEVEL: 'info' }, settings, {
    CASTLOG_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
  });
  const child = spawn(process.execPath, [main], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** Polls /health/ready until it answers 200; the time since `started`, in ms. */
async function untilReady(port: number, started: number, server: Started): Promise<number> {
  let exited = false;
  void server.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`castlog exited before it was ready:\n${server.output()}`);
    if (since(started) > READY_TIMEOUT_MS)
      throw new Error(`castlog not ready after ${READY_TIMEOUT_MS / 1000} s:\n${server.output()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health/ready`);
      await response.arrayBuffer();
      if (response.status === 200) return since(started);
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Ctrl-C, as a user stops it; then nothing of it may be left on the data directory. */
async function stop(started: Started, postgresDir: string): Promise<void> {
  if (started.child.exitCode === null) started.child.kill('SIGINT');
  const code = await Promise.race([
    started.exited,
    new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000)),
  ]);
  if (code === 'timeout') {
    started.child.kill('SIGKILL');
    await started.exited;
  }
  await findRunningPostgres(postgresDir)?.stop();
}

/** The time castlog's own log gives for its start ("castlog ready in N ms"), if it wrote it. */
const ownReadyMs = (output: string): number | undefined => {
  const match = /castlog ready in (\d+) ms/.exec(output);
  return match ? Number(match[1]) : undefined;
};

/** `npm start` (built) on an existing data directory, until /health/ready answers 200; the
 * baseline starts embedded PostgreSQL alone on the same directory until it takes connections. */
export async function coldStartScenario(options: ColdStartOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const main = join(options.repoRoot, 'dist', 'apps', 'embedded', 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`coldstart: ${main} is missing: build first`);
  const dir = await mkdtemp(join(tmpdir(), 'castlog-coldstart-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its data dir
  const dataDir = join(dir, 'data');
  const postgresDir = join(dataDir, 'postgres');
  try {
    // The data directory is made (initdb, migrations) by a first start, which is not measured.
    const [firstPort] = await freePorts(1);
    log(`coldstart: a first start makes the data directory ${dataDir}`);
    const first = startEmbeddedCastlog(main, dataDir, firstPort as number, options.castlogSettings);
    try {
      await untilReady(firstPort as number, performance.now(), first);
    } finally {
      await stop(first, postgresDir);
    }
    const rounds = await alternate(options.rounds, async (side, n) => {
      if (side === 'baseline') {
        const started = performance.now();
        const postgres = await startEmbeddedPostgres({ dataDir: postgresDir });
        const ms = since(started);
        await postgres.stop();
        log(`coldstart: round ${n}: PostgreSQL alone ready in ${Math.round(ms)} ms`);
        return { seconds_to_ready: round(ms / 1000) };
      }
      const [port] = await freePorts(1);
      const started = performance.now();
      const castlog = startEmbeddedCastlog(main, dataDir, port as number, options.castlogSettings);
      try {
        const ms = await untilReady(port as number, started, castlog);
        const own = ownReadyMs(castlog.output());
        log(
          `coldstart: round ${n}: castlog ready in ${Math.round(ms)} ms${own === undefined ? '' : ` (its log: ${own} ms)`}`,
        );
        return {
          seconds_to_ready: round(ms / 1000),
          ...(own === undefined ? {} : { own_log_ready_s: round(own / 1000) }),
        };
      } finally {
        await stop(castlog, postgresDir);
      }
    });
    const castlogSeconds = spreadOf(rounds.map((r) => r.castlog.seconds_to_ready));
    const postgresSeconds = spreadOf(rounds.map((r) => r.baseline.seconds_to_ready));
    const ratios = spreadOf(
      rounds.map((r) => ratio(r.castlog.seconds_to_ready, r.baseline.seconds_to_ready)),
    );
    const target = targetOf('coldstart.ready');
    log(
      `coldstart: castlog ${formatSpread(castlogSeconds)} s to ready, PostgreSQL alone ${formatSpread(postgresSeconds)} s`,
    );
    return {
      name: 'coldstart',
      result: {
        description:
          'The embedded server as `npm start` runs it once built (node dist/apps/embedded/src/main.js, no ' +
          'DATABASE_URL or KAFKA_BROKERS) on a data directory a first, unmeasured start made: seconds from ' +
          'spawning the process until GET /health/ready answers 200 (polled every 20 ms), then Ctrl-C. ' +
          'Baseline: embedded PostgreSQL alone started on the same data directory from the bench process, ' +
          'until it takes connections. Rounds alternate the two; figures are medians with min and max.',
        settings: { rounds: options.rounds, poll_ms: POLL_MS, node: process.version },
        seconds_to_ready: castlogSeconds,
        baseline: { postgres_alone_seconds_to_ready: postgresSeconds },
        ratio_vs_postgres_alone: ratios,
        rounds,
      },
      rows: [
        {
          scenario: 'coldstart',
          metric: 'embedded start to /health/ready (baseline: PostgreSQL alone)',
          unit: 's',
          measured: castlogSeconds.median,
          baseline: postgresSeconds.median,
          ratio: ratios.median,
          ratio_rounds: ratios,
          target: target.text,
          met: target.met(castlogSeconds.median),
        },
      ],
      chart: {
        title: 'coldstart: npm start (built) on an existing data directory',
        subtitle: `seconds until /health/ready answers 200; medians of ${options.rounds} rounds`,
        panels: [
          {
            title: 'time to ready',
            unit: 's',
            groups: [
              {
                label: 'cold start',
                bars: [
                  { series: 'castlog (embedded)', value: castlogSeconds.median },
                  { series: 'PostgreSQL alone', value: postgresSeconds.median },
                ],
              },
            ],
          },
        ],
      },
    };
  } finally {
    await findRunningPostgres(postgresDir)
      ?.stop()
      .catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}
