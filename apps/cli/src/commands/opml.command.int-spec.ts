import { FeedCatalog } from '@castlog/feeds';
import { OpmlFeed, parseOpml, toOpml } from '@castlog/opml';
import { GpodderQuery } from '@castlog/read-model';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { feed } from '../../../../test/support/contract';
import {
  CastlogUnderTest,
  EventLogKind,
  startCastlog,
  startProjector,
  TestUser,
} from '../../../../test/support/start-castlog';
import { main, WithLog, WithStore } from '../main';
import { opmlExport, opmlImport, OpmlDeps } from './opml.command';

const FIXTURES = join(__dirname, '../../../../libs/opml/src/fixtures');
const fixture = (name: string) => join(FIXTURES, name);

/** stdout and stderr collected as text; stderr a terminal when asked. */
function io(tty = false) {
  const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', isTTY: tty, columns: 120, write: (chunk: string) => (stderr.text += chunk) };
  return { stdout, stderr };
}

const urlsOf = (feeds: readonly OpmlFeed[]) => new Set(feeds.map((f) => f.url));
const fixtureUrls = async (name: string) => urlsOf(parseOpml(await readFile(fixture(name), 'utf8')).feeds);

describe.each<EventLogKind>(['kafka', 'postgres'])('castlog opml on the %s log', (log) => {
  let app: CastlogUnderTest;
  let dir: string;

  const deps = (tty = false): OpmlDeps & ReturnType<typeof io> => ({
    ...io(tty),
    dataSource: app.runtime.database.dataSource,
    eventLog: app.runtime.eventLog,
    schema: app.runtime.readModel.schema,
    pollIntervalMs: 50,
  });

  const exported = async (user: TestUser): Promise<OpmlFeed[]> => {
    const d = deps();
    expect(await opmlExport(d, user.name)).toBe(0);
    expect(d.stderr.text).toBe('');
    return parseOpml(d.stdout.text).feeds;
  };

  beforeAll(async () => {
    app = await startCastlog({ log });
    dir = await mkdtemp(join(tmpdir(), 'castlog-opml-'));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('imports an AntennaPod export, and the export lists exactly its feeds', async () => {
    const alice = await app.freshUser();
    const d = deps();
    expect(await opmlImport(d, alice.name, fixture('antennapod.opml'))).toBe(0);
    expect(d.stdout.text).toBe(
      `imported ${fixture('antennapod.opml')} for ${alice.name}: subscribed 7, failed 0\n`,
    );
    expect(d.stderr.text).toMatch(
      /^appended 7 feeds in 1 event \(request opml-import-[0-9a-f-]{36}\); waiting/,
    );
    expect(d.stderr.text).toContain(
      'opml import: event 1/1 applied, 7/7 feeds (100%): subscribed 7, failed 0\n',
    );
    expect(urlsOf(await exported(alice))).toEqual(await fixtureUrls('antennapod.opml'));
  });

  it('imports the Pocket Casts, Apple Podcasts and gPodder exports into one set, a second import adding nothing new', async () => {
    const bob = await app.freshUser();
    const names = ['pocket-casts.opml', 'apple-podcasts.opml', 'gpodder.opml'];
    const expected = new Set<string>();
    for (const name of names) {
      const d = deps();
      expect(await opmlImport(d, bob.name, fixture(name))).toBe(0);
      const urls = await fixtureUrls(name);
      expect(d.stdout.text).toBe(
        `imported ${fixture(name)} for ${bob.name}: subscribed ${urls.size}, failed 0\n`,
      );
      urls.forEach((url) => expected.add(url));
    }
    expect(urlsOf(await exported(bob))).toEqual(expected);

    // Importing again lands on the same subscriptions.
    expect(await opmlImport(deps(), bob.name, fixture('gpodder.opml'))).toBe(0);
    expect(await exported(bob)).toHaveLength(expected.size);
  });

  it("names each feed by the feed catalog's title when it knows one, by its URL otherwise", async () => {
    const erin = await app.freshUser();
    const [named, unnamed] = [feed('named'), feed('unnamed')];
    await app
      .as(erin)
      .post('/v1/subscriptions', { subscriptions: [{ feed_url: named }, { feed_url: unnamed }] });
    const catalog = new FeedCatalog(app.runtime.database.dataSource, app.runtime.readModel);
    await catalog.learn([named, unnamed], Date.now(), 0, 0);
    await catalog.record(
      named,
      { outcome: 'fetched', metadata: { title: 'A Named Show', episodeCount: 1 }, validators: {} },
      Date.now(),
      Date.now(),
    );
    expect(new Map((await exported(erin)).map((f) => [f.url, f.title]))).toEqual(
      new Map([
        [named, 'A Named Show'],
        [unnamed, unnamed],
      ]),
    );
  });

  it('imports a 10,000-feed file in one run, in chunks of at most 1000, and exports all of it', async () => {
    const carol = await app.freshUser();
    const feeds = Array.from({ length: 10_000 }, (_, i) => ({
      url: `${feed(`f${i}`)}?n=${i}&lang=fr`,
      title: `Émission n°${i} & co`,
    }));
    const file = join(dir, 'ten-thousand.opml');
    await writeFile(file, toOpml(feeds, { title: 'big' }), 'utf8');

    const d = deps();
    expect(await opmlImport(d, carol.name, file, { timeout: '120s' })).toBe(0);
    expect(d.stdout.text).toBe(`imported ${file} for ${carol.name}: subscribed 10000, failed 0\n`);
    const lines = d.stderr.text.split('\n').filter((line) => line.startsWith('opml import: '));
    expect(lines).toHaveLength(10);
    expect(lines[0]).toBe(
      'opml import: event 1/10 applied, 1000/10000 feeds (10%): subscribed 1000, failed 0',
    );
    expect(lines[9]).toBe(
      'opml import: event 10/10 applied, 10000/10000 feeds (100%): subscribed 10000, failed 0',
    );

    const out = join(dir, 'carol.opml');
    const e = deps();
    expect(await opmlExport(e, carol.name, { output: out })).toBe(0);
    expect(e.stdout.text).toBe('');
    expect(e.stderr.text).toBe(`wrote 10000 feeds to ${out}\n`);
    const back = parseOpml(await readFile(out, 'utf8')).feeds;
    expect(back).toHaveLength(10_000);
    expect(urlsOf(back)).toEqual(urlsOf(feeds));
    expect(
      await new GpodderQuery(app.runtime.database.dataSource, app.runtime.readModel).subscribedUrls(carol.id),
    ).toHaveLength(10_000);
  }, 180_000);

  it('counts the feeds the decider refuses as failed and names them', async () => {
    const dave = await app.freshUser();
    const file = join(dir, 'mixed.opml');
    const good = feed('good');
    await writeFile(
      file,
      toOpml([{ url: good }, { url: 'ftp://files.example/feed' }, { url: 'feeds.example/no-protocol' }]),
    );
    const d = deps();
    expect(await opmlImport(d, dave.name, file)).toBe(0);
    expect(d.stdout.text).toBe(`imported ${file} for ${dave.name}: subscribed 1, failed 2\n`);
    expect(d.stderr.text).toContain('failed: ftp://files.example/feed: Unsupported protocol\n');
    expect(d.stderr.text).toContain('failed: feeds.example/no-protocol: No protocol present\n');
    expect(urlsOf(await exported(dave))).toEqual(new Set([good]));
  });

  it('reads a file in the encoding its XML declaration names, and refuses one that is not UTF-8 and names none', async () => {
    const grace = await app.freshUser();
    const url = `https://f\u00fcr.example/${randomUUID()}`;
    const declared = join(dir, 'latin1.opml');
    await writeFile(
      declared,
      Buffer.from(
        `<?xml version="1.0" encoding="ISO-8859-1"?>\n<opml version="2.0"><head><title>Caf\u00e9</title></head>` +
          `<body><outline text="\u00e9" xmlUrl="${url}"/></body></opml>`,
        'latin1',
      ),
    );
    const d = deps();
    expect(await opmlImport(d, grace.name, declared)).toBe(0);
    expect(urlsOf(await exported(grace))).toEqual(new Set([url]));
    const undeclared = join(dir, 'latin1-undeclared.opml');
    await writeFile(
      undeclared,
      Buffer.from(
        `<opml version="2.0"><body><outline xmlUrl="https://caf\u00e9.example/"/></body></opml>`,
        'latin1',
      ),
    );
    const refused = deps();
    expect(await opmlImport(refused, grace.name, undeclared)).toBe(1);
    expect(refused.stderr.text).toBe(
      `castlog: ${undeclared}: the text is not UTF-8 (an XML document in another encoding must declare it)\n`,
    );
  });

  it('shows a progress bar on a terminal', async () => {
    const erin = await app.freshUser();
    const d = deps(true);
    expect(await opmlImport(d, erin.name, fixture('pocket-casts.opml'))).toBe(0);
    expect(d.stderr.text).toMatch(/opml import \[.*\] 100% \| 6\/6 feeds \| 1\/1 events/);
  });

  it('imports a file without feeds as nothing', async () => {
    const frank = await app.freshUser();
    const file = join(dir, 'empty.opml');
    await writeFile(file, toOpml([]));
    const d = deps();
    expect(await opmlImport(d, frank.name, file)).toBe(0);
    expect(d.stdout.text).toBe(`imported ${file} for ${frank.name}: subscribed 0, failed 0\n`);
    expect(d.stderr.text).toBe(`no feeds in ${file}\n`);
    expect(await exported(frank)).toEqual([]);
  });

  describe('exits 1 with one line', () => {
    it('for an unknown user, before appending anything', async () => {
      const before = await app.runtime.eventLog.endOffsets();
      const d = deps();
      expect(await opmlImport(d, 'nobody-at-all', fixture('gpodder.opml'))).toBe(1);
      expect(d.stderr.text).toBe('castlog: no user nobody-at-all\n');
      const e = deps();
      expect(await opmlExport(e, 'nobody-at-all')).toBe(1);
      expect(e.stderr.text).toBe('castlog: no user nobody-at-all\n');
      expect(d.stdout.text + e.stdout.text).toBe('');
      expect(await app.runtime.eventLog.endOffsets()).toEqual(before);
    });

    it('for a missing file, a directory, or a file that is not OPML', async () => {
      const user = await app.freshUser();
      const cases: [string, string][] = [
        [join(dir, 'missing.opml'), `castlog: cannot read ${join(dir, 'missing.opml')}: no such file\n`],
        [dir, `castlog: cannot read ${dir}: it is a directory\n`],
      ];
      const text = join(dir, 'urls.txt');
      await writeFile(text, 'https://a.example/rss\nhttps://b.example/rss\n');
      const rss = join(dir, 'feed.xml');
      await writeFile(
        rss,
        '<?xml version="1.0"?><rss version="2.0"><channel><title>x</title></channel></rss>',
      );
      const broken = join(dir, 'broken.opml');
      await writeFile(
        broken,
        '<opml version="2.0"><body><outline xmlUrl="https://a.example/"></body></opml>',
      );
      cases.push(
        [text, `castlog: ${text}: Not an OPML document: the XML is not well-formed at line 1, column 1: `],
        [rss, `castlog: ${rss}: Not an OPML document: the root element is <rss>, not <opml>.\n`],
        [broken, `castlog: ${broken}: Not an OPML document: the XML is not well-formed at line 1, column `],
      );
      for (const [file, message] of cases) {
        const d = deps();
        expect(await opmlImport(d, user.name, file)).toBe(1);
        expect(d.stderr.text.startsWith(message)).toBe(true);
        expect(d.stderr.text.split('\n')).toHaveLength(2);
      }
      expect(await exported(user)).toEqual([]);
    });

    it('for a bad --timeout', async () => {
      const user = await app.freshUser();
      const d = deps();
      expect(await opmlImport(d, user.name, fixture('gpodder.opml'), { timeout: 'soon' })).toBe(1);
      expect(d.stderr.text).toBe('castlog: --timeout must be a duration such as 30s or 2m, not "soon"\n');
      for (const [timeout, message] of [
        ['0s', 'greater than 0'],
        ['25d', 'at most 24d'],
        ['999999999999999d', 'at most 24d'],
      ]) {
        const refused = deps();
        expect(await opmlImport(refused, user.name, fixture('gpodder.opml'), { timeout })).toBe(1);
        expect(refused.stderr.text).toBe(`castlog: --timeout must be ${message}\n`);
      }
    });
  });

  it('runs through the castlog program: opml import and opml export --output', async () => {
    const grace = await app.freshUser();
    const withLog: WithLog = (body) =>
      body(
        {
          dataSource: app.runtime.database.dataSource,
          schema: app.runtime.readModel.schema,
          versions: app.runtime.readModel.versions,
          eventLog: app.runtime.eventLog,
        },
        app.config,
      );
    const withStore: WithStore = () => Promise.reject(new Error('opml does not use the auth store'));
    const castlog = async (...args: string[]) => {
      const out = io();
      const code = await main(
        ['node', 'castlog', ...args],
        { ...out, stdin: Readable.from([]) },
        withStore,
        withLog,
      );
      return { code, stdout: out.stdout.text, stderr: out.stderr.text };
    };
    const imported = await castlog('opml', 'import', grace.name, fixture('apple-podcasts.opml'));
    expect(imported).toMatchObject({ code: 0, stdout: expect.stringMatching(/subscribed 4, failed 0\n$/) });
    const out = join(dir, 'grace.opml');
    expect(await castlog('opml', 'export', grace.name, '--output', out)).toEqual({
      code: 0,
      stdout: '',
      stderr: `wrote 4 feeds to ${out}\n`,
    });
    const document = await readFile(out, 'utf8');
    expect(document).toContain('<opml version="2.0">');
    expect(document).toContain(`<title>castlog subscriptions of ${grace.name}</title>`);
    expect(urlsOf(parseOpml(document).feeds)).toEqual(await fixtureUrls('apple-podcasts.opml'));
    expect((await castlog('opml', 'import', grace.name)).code).toBe(1);
    expect(await castlog('opml', 'import', 'nobody-at-all', out)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'castlog: no user nobody-at-all\n',
    });
  });
});

describe('castlog opml import without a running projector', () => {
  let app: CastlogUnderTest;
  afterAll(() => app?.close());

  it('says the events were appended and will apply when a projector runs, and they do', async () => {
    app = await startCastlog({ projector: false });
    const user = await app.freshUser();
    const d: OpmlDeps & ReturnType<typeof io> = {
      ...io(),
      dataSource: app.runtime.database.dataSource,
      eventLog: app.runtime.eventLog,
      schema: app.runtime.readModel.schema,
      pollIntervalMs: 50,
    };
    expect(await opmlImport(d, user.name, fixture('gpodder.opml'), { timeout: '1s' })).toBe(1);
    expect(d.stderr.text).toContain(
      'castlog: the outcomes of 1 of 1 events did not arrive within 1 s: the events were appended to the ' +
        'log and will apply when a projector runs\n',
    );
    expect(d.stdout.text).toBe('');

    const projector = await startProjector(app.config);
    try {
      await app.untilProjectionAtEnd(60_000);
      const urls = await new GpodderQuery(
        app.runtime.database.dataSource,
        app.runtime.readModel,
      ).subscribedUrls(user.id);
      expect(new Set(urls)).toEqual(await fixtureUrls('gpodder.opml'));
    } finally {
      await projector.close();
    }
  }, 120_000);
});
