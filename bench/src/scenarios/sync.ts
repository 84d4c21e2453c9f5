import { parseRfc3339Micros } from '@castlog/domain';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { BenchInfra } from '../infra';
import {
  BenchUser,
  benchConfig,
  createDatabase,
  deleteTopics,
  RunningCastlog,
  startCastlog,
  uniqueName,
} from '../castlog';
import { rowsPerEvent, TableWrites, tableWrites, total } from '../footprint';
import { LoadSpec, runLoad } from '../load';
import { ScenarioOutcome, SummaryRow } from '../report';
import { alternate, Side } from '../rounds';
import { formatSpread, ratio, round, since, Spread, spreadOf } from '../stats';
import { targetOf } from '../targets';
import { compareWithStatement, measureGets, measureStatement } from './listing';
import { figures, overRounds, PhaseFigures, RoundFigures } from './write';

export interface SyncOptions {
  /** Concurrent clients POSTing, each a user of its own (the write scenario's). */
  readonly concurrency: number;
  /** Measured time of each face's POSTs, split evenly over the rounds. */
  readonly durationMs: number;
  /** Unmeasured time at the start of every round. */
  readonly warmupMs: number;
  /** The unmeasured pass of POSTs each face gets before the rounds. */
  readonly warmupPassMs: number;
  /** Alternating /v1 / sync rounds of POSTs. */
  readonly rounds: number;
  /** The listing user's subscriptions, and how many of them change after its client's `since`. */
  readonly subscriptions: number;
  readonly afterSince: number;
  /** Concurrent clients of the listing, its measured time a side and its alternating rounds. */
  readonly listingConcurrency: number;
  readonly listingDurationMs: number;
  readonly listingRounds: number;
  /** castlog settings given with `--set` (`castlogSettings`). */
  readonly castlogSettings: Record<string, string>;
  readonly log: (line: string) => void;
}

/** The most actions the draft allows in one request, and the /v1 items held against them. */
const ACTIONS = 30;
/** Changes a listing page holds, as the /v1 listing's pages. */
const PAGE = 100;

/** The changes statement of SyncQuery.changes (libs/read-model/src/queries/sync.query.ts) as it
 * sends it ($1 user, $2 the `since` cursor, $3 the page's limit, $4 the Client-ID to leave out):
 * the listing's baseline runs this statement alone. */
const changesSql = (s: string) => `
        SELECT earlier.previous, page.*
          FROM (SELECT (SELECT sub.sync_cursor FROM ${s}.subscriptions sub
                         WHERE sub.user_id = $1 AND sub.sync_cursor <= $2::bigint AND ($4::uuid IS NULL OR sub.last_client_id IS DISTINCT FROM $4::uuid)
                         ORDER BY sub.sync_cursor DESC OFFSET $3::int LIMIT 1) AS previous) earlier
          LEFT JOIN LATERAL (
            SELECT sub.sync_id, sub.latest_guid, sub.feed_url, sub.subscribed_at, sub.unsubscribed_at,
                   sub.last_updated, sub.sync_cursor FROM ${s}.subscriptions sub
             WHERE sub.user_id = $1 AND sub.sync_cursor > coalesce($2::bigint, -1) AND ($4::uuid IS NULL OR sub.last_client_id IS DISTINCT FROM $4::uuid)
             ORDER BY sub.sync_cursor LIMIT $3::int + 1) page ON true
         ORDER BY page.sync_cursor`;

interface SyncPage {
  readonly results: readonly { readonly data: { readonly sync_id: string } }[];
  readonly has_more: boolean;
  readonly next_since?: string;
}

/** One client of the sync face: the user's Bearer token and the installation's Client-ID. */
const syncHeaders = (user: BenchUser, clientId: string): Record<string, string> => ({
  authorization: `Bearer ${user.token}`,
  'client-id': clientId,
});

async function answerOf<T>(response: Response, what: string): Promise<T> {
  const text = await response.text();
  if (response.status !== 200) throw new Error(`sync: ${what} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** POSTs subscribe actions of feeds `from`…`from + count - 1` in requests of 30, one after
 * another, and checks that every action applied. */
async function subscribe(port: number, headers: Record<string, string>, from: number, count: number) {
  for (let first = from; first < from + count; first += ACTIONS) {
    const requests = Array.from({ length: Math.min(ACTIONS, from + count - first) }, (_, i) => ({
      type: 'subscription',
      action: 'subscribe',
      action_id: randomUUID(),
      occurred_at: new Date().toISOString(),
      data: { feed_url: `https://feeds.bench.example/sync/${first + i}.xml` },
    }));
    const answer = await answerOf<{ results: { status: string; reason?: string }[] }>(
      await fetch(`http://127.0.0.1:${port}/api/v1/sync`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ requests }),
      }),
      'POST /api/v1/sync',
    );
    const refused = answer.results.find((result) => result.status !== 'applied');
    if (answer.results.length !== requests.length || refused)
      throw new Error(`sync: a subscribe was not applied: ${JSON.stringify(refused ?? answer)}`);
  }
}

/** Follows `next_since` from `path` while more results follow, as a client syncing does: the path
 * of every page, the sync_ids it listed, and the last page's `next_since` (as a path). */
async function follow(port: number, headers: Record<string, string>, path: string) {
  const paths: string[] = [];
  const syncIds: string[][] = [];
  for (let next: string | undefined = path; next !== undefined;) {
    const page: SyncPage = await answerOf<SyncPage>(
      await fetch(`http://127.0.0.1:${port}${next}`, { headers }),
      `GET ${next}`,
    );
    if (page.results.length === 0) break;
    paths.push(next);
    syncIds.push(page.results.map((result) => result.data.sync_id));
    if (page.next_since === undefined) throw new Error(`sync: a page with results has no next_since`);
    const url = new URL(page.next_since);
    next = `${url.pathname}${url.search}`;
    if (!page.has_more) return { paths, syncIds, nextSince: next };
  }
  return { paths, syncIds, nextSince: undefined };
}

/** The `since` cursor a page's path carries, in microseconds (null without one). */
const cursorOf = (path: string): number | null => {
  const text = new URL(path, 'http://127.0.0.1').searchParams.get('since');
  if (text === null) return null;
  const micros = parseRfc3339Micros(text);
  if (micros === undefined) throw new Error(`sync: ${path} carries no RFC 3339 since`);
  return micros;
};

/** One user whose first subscriptions a client has synced; then `afterSince` more change (subscribes
 * from another client), and the client's next sync reads them in pages of 100 following next_since.
 * The pages' GETs over HTTP against the changes statement alone, in alternating rounds. */
async function syncListing(castlog: RunningCastlog, pool: Pool, options: SyncOptions) {
  const { log } = options;
  const before = options.subscriptions - options.afterSince;
  if (before < 1) throw new Error('sync: the listing needs more subscriptions than change after since');
  const [user] = await castlog.addUsers(1);
  if (!user) throw new Error('no user');
  const writer = syncHeaders(user, randomUUID());
  const readerId = randomUUID();
  const reader = syncHeaders(user, readerId);
  const fill = performance.now();
  await subscribe(castlog.port, writer, 0, before);
  const synced = await follow(castlog.port, reader, '/api/v1/sync?limit=1000');
  if (synced.nextSince === undefined) throw new Error('sync: the first sync ended without next_since');
  await subscribe(castlog.port, writer, before, options.afterSince);
  log(
    `sync: ${options.subscriptions} subscriptions added over POST /api/v1/sync in ${(since(fill) / 1000).toFixed(1)} s`,
  );
  const schema = `"${castlog.config.READ_MODEL_SCHEMA}"`;
  await pool.query(`ANALYZE ${schema}.subscriptions`);
  // The client's next sync starts where its first ended, in pages of 100.
  const next = new URL(synced.nextSince, 'http://127.0.0.1');
  next.searchParams.set('limit', String(PAGE));
  const { paths, syncIds } = await follow(castlog.port, reader, `${next.pathname}${next.search}`);
  const listed = syncIds.flat();
  if (listed.length !== options.afterSince || new Set(listed).size !== listed.length)
    throw new Error(
      `sync: expected ${options.afterSince} changes after since, the pages listed ${listed.length} (${new Set(listed).size} distinct)`,
    );
  const sql = changesSql(schema);
  const params = (page: number) => [user.id, cursorOf(paths[page] as string), PAGE, readerId];
  // Check once that the statement lists what the route's first page does.
  const { rows } = await pool.query<{ sync_id: string }>(sql, params(0));
  const firstPage = rows.slice(0, PAGE).map((row) => row.sync_id);
  if (firstPage.join() !== syncIds[0]?.join())
    throw new Error("sync: the changes statement does not list the route's first page");

  const roundMs = options.listingDurationMs / options.listingRounds;
  const timing = { concurrency: options.listingConcurrency, roundMs, warmupMs: options.warmupMs };
  const compared = await compareWithStatement(options.listingRounds, (side, n) => {
    log(
      `sync: listing round ${n}: ${side === 'baseline' ? 'baseline (the changes statement alone)' : 'castlog GET /api/v1/sync over HTTP'}, ${options.listingConcurrency} clients for ${roundMs / 1000} s`,
    );
    return side === 'baseline'
      ? measureStatement(pool, {
          ...timing,
          what: 'sync: the changes statement',
          sql,
          params,
          pages: paths.length,
        })
      : measureGets(castlog.port, { ...timing, headers: reader, paths });
  });
  log(
    `sync: listing p99 castlog ${formatSpread(compared.measured.p99_ms)} ms, statement ${formatSpread(compared.baseline.p99_ms)} ms, ` +
      `ratio ${formatSpread(compared.p99Ratio)}${compared.measured.errors ? ` (${compared.measured.errors} errors: ${compared.firstError})` : ''}`,
  );
  return {
    settings: {
      subscriptions: options.subscriptions,
      changed_after_since: options.afterSince,
      pages: paths.length,
      limit: PAGE,
      concurrency: options.listingConcurrency,
      duration_s: options.listingDurationMs / 1000,
      rounds: options.listingRounds,
      round_s: roundMs / 1000,
      warmup_s: options.warmupMs / 1000,
    },
    measured: { ...compared.measured, ...(compared.firstError ? { first_error: compared.firstError } : {}) },
    baseline: compared.baseline,
    rounds: compared.rounds,
    p99_ratio: compared.p99Ratio,
    p50_ratio: compared.p50Ratio,
    throughput_ratio: compared.throughputRatio,
  };
}

type SyncListing = Awaited<ReturnType<typeof syncListing>>;

/** Rows written to the read model and events appended, summed over the stretches of rounds each
 * face ran: a snapshot is taken wherever the face changes (and at both ends), since both faces
 * write to the same tables. */
class FaceFootprint {
  private readonly writes: Record<Side, Record<string, TableWrites>> = { baseline: {}, castlog: {} };
  private readonly events: Record<Side, number> = { baseline: 0, castlog: 0 };
  private last: { writes: Record<string, TableWrites>; events: number } | undefined;
  private running: Side | undefined;

  constructor(
    private readonly stats: Pool,
    private readonly castlog: RunningCastlog,
  ) {}

  private async snapshot() {
    const writes = await tableWrites(this.stats, this.castlog.runtime.database.schema);
    return { writes, events: total(await this.castlog.runtime.eventLog.endOffsets()) };
  }

  /** Before a round of `side`: closes the stretch of the other face, if one ran. */
  async enter(side: Side): Promise<void> {
    if (this.running !== side) await this.close();
    this.running = side;
  }

  /** Ends the current stretch: its rows and events go to the face that ran it. */
  async close(): Promise<void> {
    const now = await this.snapshot();
    if (this.running !== undefined && this.last !== undefined) {
      const sum = this.writes[this.running];
      for (const [table, after] of Object.entries(now.writes)) {
        const was = this.last.writes[table] ?? { inserted: 0, updated: 0, deleted: 0 };
        const had = sum[table] ?? { inserted: 0, updated: 0, deleted: 0 };
        sum[table] = {
          inserted: had.inserted + after.inserted - was.inserted,
          updated: had.updated + after.updated - was.updated,
          deleted: had.deleted + after.deleted - was.deleted,
        };
      }
      this.events[this.running] += now.events - this.last.events;
    }
    this.last = now;
    this.running = undefined;
  }

  /** Rows per request (event) and per action or item, in all and by table. */
  of(side: Side) {
    const rows = rowsPerEvent({}, this.writes[side], this.events[side]);
    return {
      ...rows,
      rows_written_per_item: round(rows.rows_written_per_event / ACTIONS, 3),
      by_table: Object.fromEntries(
        Object.entries(rows.by_table).map(([table, writes]) => [
          table,
          { ...writes, per_item: round(writes.per_event / ACTIONS, 3) },
        ]),
      ),
    };
  }
}

/** 64 (by default) clients, each a user of its own, POST 30 sync-draft subscribe actions to
 * /api/v1/sync against /v1 POSTs of 30 items, on the same castlog, in alternating rounds. */
async function syncThroughput(castlog: RunningCastlog, stats: Pool, options: SyncOptions) {
  const { log } = options;
  const users = await castlog.addUsers(options.concurrency);
  const runId = uniqueName('s');
  const faces: Record<
    Side,
    { headers: Record<string, string>[]; request: (run: string) => LoadSpec['request'] }
  > = {
    baseline: {
      headers: users.map((user) => ({ authorization: `Bearer ${user.token}` })),
      request: (run) => ({
        kind: 'add',
        path: '/v1/subscriptions',
        items: ACTIONS,
        runId: `${runId}_v1_${run}`,
      }),
    },
    castlog: {
      headers: users.map((user) => syncHeaders(user, randomUUID())),
      request: (run) => ({
        kind: 'sync',
        path: '/api/v1/sync',
        actions: ACTIONS,
        runId: `${runId}_sync_${run}`,
      }),
    },
  };
  const load = (side: Side, durationMs: number, run: string) =>
    runLoad({
      port: castlog.port,
      concurrency: options.concurrency,
      durationMs,
      warmupMs: options.warmupMs,
      clientHeaders: faces[side].headers,
      request: faces[side].request(run),
      expectStatus: 200,
    });
  // Both faces share one castlog and one broker: each gets the same unmeasured pass first.
  log(`sync: warming /v1 POSTs of ${ACTIONS} items up for ${options.warmupPassMs / 1000} s`);
  await load('baseline', options.warmupPassMs, 'warmup');
  log(`sync: warming POSTs of ${ACTIONS} sync actions up for ${options.warmupPassMs / 1000} s`);
  await load('castlog', options.warmupPassMs, 'warmup');
  const footprint = new FaceFootprint(stats, castlog);
  const roundMs = options.durationMs / options.rounds;
  const rounds = await alternate(options.rounds, async (side, n): Promise<RoundFigures> => {
    await footprint.enter(side);
    log(
      `sync: round ${n}: ${side === 'baseline' ? `/v1 POSTs of ${ACTIONS} items` : `POSTs of ${ACTIONS} sync actions`}, ${options.concurrency} clients for ${roundMs / 1000} s`,
    );
    return figures(await load(side, roundMs, `${n}`), ACTIONS);
  });
  await footprint.close();
  const withRatios = rounds.map((r) => ({
    ...r,
    throughput_ratio: ratio(r.castlog.items_per_s, r.baseline.items_per_s),
    p50_ratio: ratio(r.castlog.p50_ms, r.baseline.p50_ms),
    p99_ratio: ratio(r.castlog.p99_ms, r.baseline.p99_ms),
  }));
  const measured = overRounds(rounds.map((r) => r.castlog));
  const baseline = overRounds(rounds.map((r) => r.baseline));
  const throughputRatio = spreadOf(withRatios.map((r) => r.throughput_ratio));
  const sync = footprint.of('castlog');
  const v1 = footprint.of('baseline');
  log(
    `sync: ${formatSpread(measured.items_per_s)} actions/s (${measured.errors} errors), /v1 ${formatSpread(baseline.items_per_s)} items/s ` +
      `(${baseline.errors} errors); ratio ${formatSpread(throughputRatio)}, by round ${withRatios.map((r) => r.throughput_ratio).join(', ')}; ` +
      `rows written: ${sync.rows_written_per_item} an action, ${v1.rows_written_per_item} a /v1 item`,
  );
  return {
    settings: {
      concurrency: options.concurrency,
      users: users.length,
      actions_per_request: ACTIONS,
      duration_s: options.durationMs / 1000,
      rounds: options.rounds,
      round_s: roundMs / 1000,
      warmup_s: options.warmupMs / 1000,
      warmup_pass_s: options.warmupPassMs / 1000,
      warmup_pass_faces: ['/v1', 'sync'],
    },
    measured,
    baseline,
    throughput_ratio: throughputRatio,
    p50_ratio: spreadOf(withRatios.map((r) => r.p50_ratio)),
    p99_ratio: spreadOf(withRatios.map((r) => r.p99_ratio)),
    rounds: withRatios,
    footprint: {
      description:
        "Over each face's rounds (their warm-ups included; a snapshot wherever the face changes): rows " +
        'written to the read model (pg_stat_user_tables: inserted + updated + deleted) per request (event) and ' +
        `per action or item (a request carries ${ACTIONS}).`,
      sync,
      v1,
    },
  };
}

type SyncThroughput = Awaited<ReturnType<typeof syncThroughput>>;

/** The sync draft's face on one castlog: POSTs of 30 actions against /v1 POSTs of 30 items (the same
 * log and decider underneath), the rows each writes, and the sync listing's pages against the
 * statement its route runs. */
export async function syncScenario(infra: BenchInfra, options: SyncOptions): Promise<ScenarioOutcome> {
  const { log } = options;
  const database = await createDatabase(infra.databaseUrl, uniqueName('castlog_bench_sync'));
  const config = benchConfig(database.url, infra.kafkaBrokers, options.castlogSettings);
  const castlog = await startCastlog(config);
  const pool = new Pool({ connectionString: database.url, max: config.DATABASE_POOL_SIZE });
  const stats = new Pool({ connectionString: database.url, max: 1 });
  try {
    // The listing first, on tables that hold its user alone, as the listing scenario's.
    const listing = await syncListing(castlog, pool, options);
    const throughput = await syncThroughput(castlog, stats, options);
    return syncOutcome(options, config.DATABASE_POOL_SIZE, throughput, listing);
  } finally {
    await stats.end().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await castlog.close().catch((error: unknown) => log(`sync: closing castlog: ${String(error)}`));
    await deleteTopics(infra.kafkaBrokers, [config.KAFKA_TOPIC]).catch(() => undefined);
    await database.drop().catch((error: unknown) => log(`sync: dropping the database: ${String(error)}`));
  }
}

/** The summary table's rows: the POSTs' throughput (a target) and latency, the listing's (its p99
 * a target), and the rows written per action against per /v1 item. */
function syncRows(throughput: SyncThroughput, listing: SyncListing): SummaryRow[] {
  const row = (
    metric: string,
    unit: string,
    measured: Spread,
    baseline: Spread,
    ratios: Spread,
    target?: { text: string; met: (value: number) => boolean },
  ): SummaryRow => ({
    scenario: 'sync',
    metric,
    unit,
    measured: measured.median,
    baseline: baseline.median,
    ratio: ratios.median,
    ratio_rounds: ratios,
    ...(target ? { target: target.text, met: target.met(ratios.median) } : {}),
  });
  const posts = `POST of ${ACTIONS} actions / /v1 POST of ${ACTIONS} items`;
  const { measured, baseline } = throughput;
  const { sync, v1 } = throughput.footprint;
  return [
    row(
      `${posts}, throughput`,
      'actions/s vs items/s',
      measured.items_per_s,
      baseline.items_per_s,
      throughput.throughput_ratio,
      targetOf('sync.throughput'),
    ),
    row(`${posts}, p50`, 'ms', measured.p50_ms, baseline.p50_ms, throughput.p50_ratio),
    row(`${posts}, p99`, 'ms', measured.p99_ms, baseline.p99_ms, throughput.p99_ratio),
    {
      scenario: 'sync',
      metric: 'read-model rows written per action / per /v1 item',
      unit: 'rows',
      measured: sync.rows_written_per_item,
      baseline: v1.rows_written_per_item,
      ratio: ratio(sync.rows_written_per_item, v1.rows_written_per_item),
    },
    row(
      `GET /api/v1/sync page of ${PAGE} / the statement alone, throughput`,
      'req/s',
      listing.measured.requests_per_s,
      listing.baseline.requests_per_s,
      listing.throughput_ratio,
    ),
    row(
      `GET /api/v1/sync page of ${PAGE}, p50`,
      'ms',
      listing.measured.p50_ms,
      listing.baseline.p50_ms,
      listing.p50_ratio,
    ),
    row(
      `GET /api/v1/sync page of ${PAGE}, p99`,
      'ms',
      listing.measured.p99_ms,
      listing.baseline.p99_ms,
      listing.p99_ratio,
      targetOf('sync.listing.p99'),
    ),
  ];
}

/** The JSON section, the table rows and the chart. */
function syncOutcome(
  options: SyncOptions,
  poolSize: number,
  throughput: SyncThroughput,
  listing: SyncListing,
): ScenarioOutcome {
  return {
    name: 'sync',
    result: {
      description:
        `Concurrent clients, each a user of its own with a Bearer token and a Client-ID, POST ${ACTIONS} ` +
        `sync-draft subscribe actions (new feed urls and action_ids) to /api/v1/sync; baseline: the same clients ` +
        `POST ${ACTIONS} items to /v1/subscriptions on the same castlog (same log and decider). Rounds alternate ` +
        'the two (the order flips every round); figures are medians of the rounds with min and max. Listing: one ' +
        "user's client syncs its first subscriptions, more change, and its next sync's pages (following " +
        `next_since, limit ${PAGE}) are cycled by concurrent clients over HTTP; baseline: the changes statement of ` +
        'SyncQuery.changes alone with the same parameters on a pg pool of the same size.',
      settings: {
        concurrency: options.concurrency,
        database_pool_size: poolSize,
        listing_concurrency: options.listingConcurrency,
      },
      throughput,
      listing,
      throughput_ratio_vs_baseline: throughput.throughput_ratio.median,
      p99_ratio_vs_baseline: throughput.p99_ratio.median,
      listing_p99_ratio_vs_baseline: listing.p99_ratio.median,
      rows_written_per_action: throughput.footprint.sync.rows_written_per_item,
      rows_written_per_v1_item: throughput.footprint.v1.rows_written_per_item,
    },
    rows: syncRows(throughput, listing),
    chart: syncChart(options, throughput, listing),
  };
}

function syncChart(
  options: SyncOptions,
  throughput: { measured: PhaseFigures; baseline: PhaseFigures; footprint: SyncThroughput['footprint'] },
  listing: SyncListing,
): ScenarioOutcome['chart'] {
  const latency = (
    measured: Record<'p50_ms' | 'p95_ms' | 'p99_ms', Spread>,
    baseline: Record<'p50_ms' | 'p95_ms' | 'p99_ms', Spread>,
    series: [string, string],
  ) =>
    (['p50_ms', 'p95_ms', 'p99_ms'] as const).map((key) => ({
      label: key.replace('_ms', ''),
      bars: [
        { series: series[0], value: measured[key].median },
        { series: series[1], value: baseline[key].median },
      ],
    }));
  const posts: [string, string] = [`sync POST of ${ACTIONS} actions`, `/v1 POST of ${ACTIONS} items`];
  const gets: [string, string] = ['castlog (HTTP)', 'baseline (SQL alone)'];
  return {
    title: 'sync: POST and GET /api/v1/sync, against /v1 POSTs and the bare SQL',
    subtitle:
      `${options.concurrency} POSTing clients, ${options.rounds} rounds; listing: ${options.afterSince} changes in pages of ` +
      `${PAGE}, ${options.listingConcurrency} clients, ${options.listingRounds} rounds (medians)`,
    panels: [
      {
        title: 'POST throughput',
        unit: 'actions or items/s',
        groups: [
          {
            label: `POSTs of ${ACTIONS}`,
            bars: [
              { series: posts[0], value: throughput.measured.items_per_s.median },
              { series: posts[1], value: throughput.baseline.items_per_s.median },
            ],
          },
        ],
      },
      { title: 'POST latency', unit: 'ms', groups: latency(throughput.measured, throughput.baseline, posts) },
      {
        title: `GET page of ${PAGE} latency`,
        unit: 'ms',
        groups: latency(listing.measured, listing.baseline, gets),
      },
      {
        title: 'read-model rows written',
        unit: 'rows',
        groups: [
          {
            label: 'per action or item',
            bars: [
              { series: posts[0], value: throughput.footprint.sync.rows_written_per_item },
              { series: posts[1], value: throughput.footprint.v1.rows_written_per_item },
            ],
          },
        ],
      },
    ],
  };
}
