/** `npm run bench`: castlog against baselines measured in the same run, on real Kafka and
 * PostgreSQL (scaled mode). See docs/performance.md. */
import 'reflect-metadata';
import { KAFKA_VERSION } from '@castlog/infra';
import { Command, InvalidArgumentError, Option } from 'commander';
import { mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { Client } from 'pg';
import { renderChart } from './chart';
import { writeHistory } from './history';
import { benchInfra, castlogSettings, settingsNotApplied } from './infra';
import { markdownTable, ScenarioOutcome, targetsTable } from './report';
import { commandOf, inHistory, loadAverage, sourceState, timestampOf, writeNewFile } from './run-record';
import { catchupScenario, LogFixture } from './scenarios/catchup';
import { coldStartScenario } from './scenarios/coldstart';
import { feedsScenario } from './scenarios/feeds';
import { gpodderScenario } from './scenarios/gpodder';
import { listingScenario } from './scenarios/listing';
import { replayScenario } from './scenarios/replay';
import { syncScenario } from './scenarios/sync';
import { webScenario } from './scenarios/web';
import { writeScenario } from './scenarios/write';
import { evaluateTargets } from './targets';

const SCENARIOS = [
  'write',
  'catchup',
  'listing',
  'replay',
  'coldstart',
  'gpodder',
  'sync',
  'feeds',
  'web',
] as const;
type Scenario = (typeof SCENARIOS)[number];

/** The settings a full run uses; a run below any of them is labelled short (`-short` in its file
 * name, `short_run` in its JSON) and is left out of the history. */
const FULL = {
  events: 1_000_000,
  writeDurationS: 30,
  listingDurationS: 15,
  writeRounds: 5,
  otherRounds: 3,
  gpodderRounds: 5,
  gpodderClients: 16,
  gpodderSyncs: 10,
  warmupPassS: 60,
  feeds: 10_000,
  webSubscriptions: 5_000,
};

const positiveInt = (value: string): number => {
  const number = Number(value.replace(/[_,]/g, ''));
  if (!Number.isInteger(number) || number <= 0) throw new InvalidArgumentError('must be a positive integer');
  return number;
};

const positiveNumber = (value: string): number => {
  const number = Number(value);
  if (!(number > 0)) throw new InvalidArgumentError('must be a positive number');
  return number;
};

const nonNegativeNumber = (value: string): number => {
  const number = Number(value);
  if (!(number >= 0)) throw new InvalidArgumentError('must be zero or a positive number');
  return number;
};

interface Options {
  scenario: 'all' | Scenario;
  events?: number;
  quick: boolean;
  concurrency: number;
  duration?: number;
  rounds?: number;
  warmup?: number;
  listingConcurrency: number;
  subscriptions?: number;
  gpodderClients: number;
  gpodderSyncs: number;
  feeds?: number;
  profile: boolean;
  set: string[];
  out?: string;
  history: boolean;
}

const repoRoot = resolve(__dirname, '..', '..', '..');
const resultsDir = join(repoRoot, 'bench', 'results');
const log = (line: string): void =>
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The server settings that move the scenarios' figures, as the server reports them. */
const RECORDED_POSTGRES_SETTINGS = [
  'max_wal_size',
  'shared_buffers',
  'checkpoint_timeout',
  'synchronous_commit',
  'work_mem',
  'max_connections',
];

async function postgresServer(url: string): Promise<{ version: string; settings: Record<string, string> }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; value: string }>(
      `SELECT name, current_setting(name) AS value FROM pg_settings
        WHERE name = ANY($1) OR name = 'server_version' ORDER BY name`,
      [RECORDED_POSTGRES_SETTINGS],
    );
    const settings = Object.fromEntries(rows.map((row) => [row.name, row.value]));
    const { server_version: version = 'unknown', ...rest } = settings;
    return { version, settings: rest };
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const program = new Command('bench')
    .description('castlog benchmarks against baselines measured in the same run')
    .addOption(
      new Option('--scenario <name>', 'which scenario to run').choices([...SCENARIOS, 'all']).default('all'),
    )
    .option(
      '--events <n>',
      'events in the log for catchup and replay (default 1,000,000; --quick 20,000)',
      positiveInt,
    )
    .option(
      '--quick',
      'a small smoke run: few events, short phases, results under .castlog/bench/quick/',
      false,
    )
    .option(
      '--concurrency <n>',
      'concurrent HTTP clients of the write scenario and the sync POSTs',
      positiveInt,
      64,
    )
    .option(
      '--duration <s>',
      'measured seconds per system and load phase, split over the rounds (default: write and sync POSTs 30, listing, sync listing and web 15; --quick 2)',
      positiveNumber,
    )
    .option(
      '--rounds <n>',
      'alternating baseline/castlog rounds of every scenario (default: write, sync POSTs and gpodder 5, catchup, listing, sync listing, coldstart and web 3; --quick 2 for write and sync POSTs, 1 for the others)',
      positiveInt,
    )
    .option(
      '--warmup <s>',
      'write and sync scenarios: the unmeasured pass of POSTs each system or face gets first (default 60; --quick the phase duration)',
      nonNegativeNumber,
    )
    .option(
      '--listing-concurrency <n>',
      'concurrent clients of the listing scenario, the sync listing and the web scenario',
      positiveInt,
      8,
    )
    .option(
      '--subscriptions <n>',
      "the listing and sync listing user's subscriptions (default 10,000; --quick 2,000), and the web scenario's (default 5,000, --quick too)",
      positiveInt,
    )
    .option(
      '--gpodder-clients <n>',
      'gpodder: clients syncing at once, a user each',
      positiveInt,
      FULL.gpodderClients,
    )
    .option(
      '--gpodder-syncs <n>',
      'gpodder: incremental syncs of each client after its first',
      positiveInt,
      FULL.gpodderSyncs,
    )
    .option(
      '--feeds <n>',
      'feeds: distinct feeds the resolver resolves alone, timed (default 10,000; --quick 1,000)',
      positiveInt,
    )
    .option('--profile', 'catchup: time applyBatch by stage (load / decide / write / commit)', false)
    .option(
      '--set <NAME=value>',
      "a castlog setting for castlog's side of every scenario, instead of the bench's (repeatable); " +
        'such a run gets -set in its file name and is left out of the history',
      (pair: string, pairs: string[]) => [...pairs, pair],
      [],
    )
    .option(
      '--out <dir>',
      'where results go (default bench/results; short and --set runs .castlog/bench, --quick .castlog/bench/quick)',
    )
    .option(
      '--history',
      'run nothing: rewrite the history of runs in docs/performance.md from bench/results/*.json',
      false,
    )
    .parse();
  const options = program.opts<Options>();
  if (options.history) {
    const runs = await writeHistory(repoRoot, resultsDir, log);
    log(`history: ${runs} runs written to docs/performance.md`);
    return;
  }
  const loadBefore = loadAverage();
  const started = new Date();
  // The tree as the build before this run compiled it (others may change it while the run lasts).
  const source = sourceState(repoRoot);
  const quick = options.quick;
  const events = options.events ?? (quick ? 20_000 : FULL.events);
  const writeDurationS = options.duration ?? (quick ? 2 : FULL.writeDurationS);
  const listingDurationS = options.duration ?? (quick ? 2 : FULL.listingDurationS);
  const writeRounds = options.rounds ?? (quick ? 2 : FULL.writeRounds);
  const otherRounds = options.rounds ?? (quick ? 1 : FULL.otherRounds);
  const gpodderRounds = options.rounds ?? (quick ? 1 : FULL.gpodderRounds);
  const warmupPassS = options.warmup ?? (quick ? writeDurationS : FULL.warmupPassS);
  const warmupMs = quick ? 500 : 3000;
  const subscriptions = options.subscriptions ?? (quick ? 2000 : 10_000);
  const feeds = options.feeds ?? (quick ? 1000 : FULL.feeds);
  const webSubscriptions = options.subscriptions ?? FULL.webSubscriptions;
  const afterSince = Math.min(1000, Math.max(100, Math.round(subscriptions / 10)));
  const castlogSet = (() => {
    try {
      return castlogSettings(options.set);
    } catch (error) {
      return program.error(error instanceof Error ? error.message : String(error));
    }
  })();
  const setLabel = Object.keys(castlogSet).length > 0;
  const selected: Scenario[] = options.scenario === 'all' ? [...SCENARIOS] : [options.scenario];
  const runs = (scenario: Scenario) =>
    selected.includes(scenario) || (scenario === 'catchup' && selected.includes('replay'));
  const shortReasons = [
    ...(quick ? ['--quick'] : []),
    ...(runs('write') && writeRounds < FULL.writeRounds ? [`write: ${writeRounds} rounds`] : []),
    ...(runs('write') && writeDurationS < FULL.writeDurationS
      ? [`write: ${writeDurationS} s per phase`]
      : []),
    ...(runs('write') && warmupPassS < FULL.warmupPassS ? [`write: ${warmupPassS} s warm-up pass`] : []),
    ...(runs('listing') && listingDurationS < FULL.listingDurationS
      ? [`listing: ${listingDurationS} s per side`]
      : []),
    ...((runs('catchup') || runs('listing') || runs('coldstart') || runs('web')) &&
    otherRounds < FULL.otherRounds
      ? [`${otherRounds} rounds for catchup, listing, coldstart and web`]
      : []),
    ...(runs('web') && listingDurationS < FULL.listingDurationS
      ? [`web: ${listingDurationS} s per side`]
      : []),
    ...(runs('catchup') && events < FULL.events ? [`${events.toLocaleString('en-US')} events`] : []),
    ...(runs('gpodder') && gpodderRounds < FULL.gpodderRounds ? [`gpodder: ${gpodderRounds} rounds`] : []),
    ...(runs('gpodder') &&
    (options.gpodderClients !== FULL.gpodderClients || options.gpodderSyncs !== FULL.gpodderSyncs)
      ? [`gpodder: ${options.gpodderClients} clients, ${options.gpodderSyncs} incremental syncs`]
      : []),
    ...(runs('sync') && writeRounds < FULL.writeRounds ? [`sync: ${writeRounds} rounds of POSTs`] : []),
    ...(runs('sync') && writeDurationS < FULL.writeDurationS
      ? [`sync: ${writeDurationS} s of POSTs per face`]
      : []),
    ...(runs('sync') && warmupPassS < FULL.warmupPassS ? [`sync: ${warmupPassS} s warm-up pass`] : []),
    ...(runs('sync') && otherRounds < FULL.otherRounds ? [`sync: ${otherRounds} listing rounds`] : []),
    ...(runs('sync') && listingDurationS < FULL.listingDurationS
      ? [`sync: listing ${listingDurationS} s per side`]
      : []),
    ...(runs('feeds') && feeds < FULL.feeds ? [`feeds: ${feeds.toLocaleString('en-US')} feeds`] : []),
    ...(runs('feeds') && writeRounds < FULL.writeRounds ? [`feeds: ${writeRounds} write rounds`] : []),
    ...(runs('feeds') && writeDurationS < FULL.writeDurationS
      ? [`feeds: ${writeDurationS} s of POSTs per condition`]
      : []),
    ...(runs('feeds') && warmupPassS < FULL.warmupPassS ? [`feeds: ${warmupPassS} s warm-up pass`] : []),
  ];
  // Short runs and runs with settings of their own are experiments: not committed, so they go
  // under .castlog/ (git ignores it) unless --out says otherwise.
  const experiment = shortReasons.length > 0 || setLabel;
  const out = resolve(
    options.out ??
      (experiment ? join(repoRoot, '.castlog', 'bench', ...(quick ? ['quick'] : [])) : resultsDir),
  );
  const settings = {
    scenario: options.scenario,
    events,
    quick,
    concurrency: options.concurrency,
    write_duration_s: writeDurationS,
    write_rounds: writeRounds,
    write_warmup_pass_s: warmupPassS,
    round_warmup_s: warmupMs / 1000,
    other_rounds: otherRounds,
    listing_duration_s: listingDurationS,
    listing_concurrency: options.listingConcurrency,
    subscriptions,
    gpodder_clients: options.gpodderClients,
    gpodder_syncs: options.gpodderSyncs,
    gpodder_rounds: gpodderRounds,
    feeds,
    web_subscriptions: webSubscriptions,
    profile: options.profile,
    out: relative(repoRoot, out) || '.',
  };
  log(
    `load average before the run: ${Object.values(loadBefore)
      .map((v) => v.toFixed(2))
      .join(' ')}`,
  );
  if (shortReasons.length > 0) log(`a short run (${shortReasons.join('; ')}): labelled as such`);
  if (setLabel)
    log(
      `castlog settings of this run (--set): ${Object.entries(castlogSet)
        .map(([name, value]) => `${name}=${value}`)
        .join(', ')}: labelled as such`,
    );
  const notApplied = settingsNotApplied(process.env);
  if (notApplied.length > 0)
    log(
      `castlog settings in the environment, not applied (the bench sets its own; --set NAME=value applies one): ${notApplied.join(', ')}`,
    );

  const infra = await benchInfra(log);
  log(`Kafka ${infra.kafkaBrokers} (${infra.source.kafka}), PostgreSQL (${infra.source.postgres})`);
  const outcomes: ScenarioOutcome[] = [];
  let fixture: LogFixture | undefined;
  let stopping = false;
  const onSignal = () => {
    if (stopping) process.exit(130);
    stopping = true;
    log('interrupted: cleaning up (Ctrl-C again to quit at once)');
    void Promise.allSettled([fixture?.close(), infra.stop()]).then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const postgres = await postgresServer(infra.databaseUrl);
    const machine = {
      cores: cpus().length,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      memory_gib: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      postgres: postgres.version,
      postgres_settings: postgres.settings,
      kafka:
        infra.source.kafka === 'started for this run' ? KAFKA_VERSION : `${infra.source.kafka} (not checked)`,
      infra: infra.source,
    };
    const catchup = () =>
      catchupScenario(infra, {
        events,
        rounds: otherRounds,
        profile: options.profile,
        castlogSettings: castlogSet,
        log,
      });
    for (const scenario of selected) {
      log(`scenario ${scenario}`);
      if (scenario === 'write') {
        outcomes.push(
          await writeScenario(infra, {
            concurrency: options.concurrency,
            durationMs: writeDurationS * 1000,
            warmupMs,
            rounds: writeRounds,
            warmupPassMs: warmupPassS * 1000,
            castlogSettings: castlogSet,
            log,
          }),
        );
      } else if (scenario === 'listing') {
        outcomes.push(
          await listingScenario(infra, {
            subscriptions,
            afterSince,
            concurrency: options.listingConcurrency,
            durationMs: listingDurationS * 1000,
            warmupMs,
            rounds: otherRounds,
            castlogSettings: castlogSet,
            log,
          }),
        );
      } else if (scenario === 'catchup') {
        const caught = await catchup();
        fixture = caught.fixture;
        outcomes.push(caught.outcome);
      } else if (scenario === 'replay') {
        if (!fixture) {
          log('replay needs the catch-up of the same run: running catchup first');
          const caught = await catchup();
          fixture = caught.fixture;
          outcomes.push(caught.outcome);
        }
        outcomes.push(await replayScenario(fixture, log));
      } else if (scenario === 'gpodder') {
        outcomes.push(
          await gpodderScenario(infra, {
            clients: options.gpodderClients,
            syncs: options.gpodderSyncs,
            rounds: gpodderRounds,
            castlogSettings: castlogSet,
            log,
          }),
        );
      } else if (scenario === 'sync') {
        outcomes.push(
          await syncScenario(infra, {
            concurrency: options.concurrency,
            durationMs: writeDurationS * 1000,
            warmupMs,
            rounds: writeRounds,
            warmupPassMs: warmupPassS * 1000,
            subscriptions,
            afterSince,
            listingConcurrency: options.listingConcurrency,
            listingDurationMs: listingDurationS * 1000,
            listingRounds: otherRounds,
            castlogSettings: castlogSet,
            log,
          }),
        );
      } else if (scenario === 'feeds') {
        outcomes.push(
          await feedsScenario(infra, {
            feeds,
            concurrency: options.concurrency,
            durationMs: writeDurationS * 1000,
            warmupMs,
            warmupPassMs: warmupPassS * 1000,
            rounds: writeRounds,
            castlogSettings: castlogSet,
            log,
          }),
        );
      } else if (scenario === 'web') {
        outcomes.push(
          await webScenario(infra, {
            subscriptions: webSubscriptions,
            concurrency: options.listingConcurrency,
            durationMs: listingDurationS * 1000,
            warmupMs,
            rounds: otherRounds,
            castlogSettings: castlogSet,
            log,
          }),
        );
      } else {
        outcomes.push(
          await coldStartScenario({ repoRoot, rounds: otherRounds, castlogSettings: castlogSet, log }),
        );
      }
      if (scenario === 'catchup' && !selected.includes('replay')) {
        await fixture?.close();
        fixture = undefined;
      }
      if (scenario === 'replay') {
        await fixture?.close();
        fixture = undefined;
      }
    }
    await fixture?.close();
    fixture = undefined;

    const finished = new Date();
    const rows = outcomes.flatMap((outcome) => outcome.rows);
    const report: Record<string, unknown> = {
      method: 2,
      date: started.toISOString().slice(0, 10),
      started_at: started.toISOString(),
      finished_at: finished.toISOString(),
      command: commandOf({
        args: process.argv.slice(2),
        execArgv: process.execArgv,
        nodeOptions: process.env.NODE_OPTIONS,
        script: relative(process.cwd(), process.argv[1] ?? ''),
      }),
      argv: process.argv,
      node_flags: { exec_argv: process.execArgv, node_options: process.env.NODE_OPTIONS ?? null },
      cwd: process.cwd(),
      node: process.version,
      commit: source.commit_short,
      source,
      load_average_before: loadBefore,
      settings_not_applied: notApplied,
      castlog_settings: castlogSet,
      load_average_after: loadAverage(),
      quick,
      short_run: shortReasons.length > 0,
      ...(shortReasons.length > 0 ? { short_reasons: shortReasons } : {}),
      settings,
      machine,
      scenarios: outcomes.map((outcome) => outcome.name),
      ...Object.fromEntries(outcomes.map((outcome) => [outcome.name, outcome.result])),
      summary: rows,
    };
    const targets = evaluateTargets(report);
    report.targets = targets;

    mkdirSync(out, { recursive: true });
    const stem = `${timestampOf(started)}-${options.scenario}${shortReasons.length > 0 ? '-short' : ''}${setLabel ? '-set' : ''}`;
    const jsonFile = writeNewFile(out, stem, '.json', `${JSON.stringify(report, null, 2)}\n`);
    const written = basename(jsonFile, '.json');
    const charts = outcomes.map((outcome) =>
      writeNewFile(out, `${written}.${outcome.name}`, '.svg', renderChart(outcome.chart)),
    );
    const table = markdownTable(rows);
    const targetTable = targetsTable(targets);
    writeNewFile(
      out,
      written,
      '.md',
      `${report.command} — ${report.started_at}, commit ${String(report.commit)}${source.dirty ? ' (tree dirty)' : ''}\n\n` +
        `${table}\n\nTargets:\n\n${targetTable}\n`,
    );
    console.log(table);
    console.log();
    console.log(targetTable);
    log(
      `results: ${relative(repoRoot, jsonFile)}, charts: ${charts.map((file) => relative(repoRoot, file)).join(', ')}`,
    );
    if (out === resultsDir && inHistory(report)) {
      const count = await writeHistory(repoRoot, resultsDir, log);
      log(`history: ${count} runs written to docs/performance.md`);
    }
  } finally {
    await fixture?.close();
    await infra.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
