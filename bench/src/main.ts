/** `npm run bench`: castlog against baselines measured in the same run, on real Kafka and
 * PostgreSQL (scaled mode). See docs/performance.md. */
import 'reflect-metadata';
import { KAFKA_VERSION } from '@castlog/infra';
import { Command, InvalidArgumentError, Option } from 'commander';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { Client } from 'pg';
import { renderChart } from './chart';
import { benchInfra } from './infra';
import { markdownTable, ScenarioOutcome } from './report';
import { catchupScenario, LogFixture } from './scenarios/catchup';
import { listingScenario } from './scenarios/listing';
import { replayScenario } from './scenarios/replay';
import { writeScenario } from './scenarios/write';

const SCENARIOS = ['write', 'catchup', 'listing', 'replay'] as const;
type Scenario = (typeof SCENARIOS)[number];

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

interface Options {
  scenario: 'all' | Scenario;
  events?: number;
  quick: boolean;
  concurrency: number;
  duration?: number;
  rounds?: number;
  listingConcurrency: number;
  subscriptions?: number;
  profile: boolean;
  out?: string;
}

const repoRoot = resolve(__dirname, '..', '..', '..');
const log = (line: string): void =>
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

async function postgresVersion(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0]?.server_version ?? 'unknown';
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
      'a small smoke run: few events, short phases, results under bench/results/quick/',
      false,
    )
    .option('--concurrency <n>', 'concurrent HTTP clients of the write scenario', positiveInt, 64)
    .option('--duration <s>', 'measured seconds per load phase (default 15; --quick 2)', positiveNumber)
    .option(
      '--rounds <n>',
      'write scenario: alternating baseline/castlog rounds each phase is split into (default 3; --quick 1)',
      positiveInt,
    )
    .option('--listing-concurrency <n>', 'concurrent clients of the listing scenario', positiveInt, 8)
    .option(
      '--subscriptions <n>',
      "the listing user's subscriptions (default 10,000; --quick 2,000)",
      positiveInt,
    )
    .option('--profile', 'catchup: time applyBatch by stage (load / decide / write / commit)', false)
    .option('--out <dir>', 'where results go (default bench/results, --quick bench/results/quick)')
    .parse();
  const options = program.opts<Options>();
  const quick = options.quick;
  const events = options.events ?? (quick ? 20_000 : 1_000_000);
  const durationMs = (options.duration ?? (quick ? 2 : 15)) * 1000;
  const warmupMs = quick ? 500 : 3000;
  const subscriptions = options.subscriptions ?? (quick ? 2000 : 10_000);
  const out = resolve(options.out ?? join(repoRoot, 'bench', 'results', ...(quick ? ['quick'] : [])));
  const selected: Scenario[] = options.scenario === 'all' ? [...SCENARIOS] : [options.scenario];

  const infra = await benchInfra(log);
  log(`Kafka ${infra.kafkaBrokers} (${infra.source.kafka}), PostgreSQL (${infra.source.postgres})`);
  const started = new Date();
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
    const machine = {
      cores: cpus().length,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      memory_gib: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      postgres: await postgresVersion(infra.databaseUrl),
      kafka:
        infra.source.kafka === 'started for this run' ? KAFKA_VERSION : `${infra.source.kafka} (not checked)`,
      infra: infra.source,
    };
    for (const scenario of selected) {
      log(`scenario ${scenario}`);
      if (scenario === 'write') {
        outcomes.push(
          await writeScenario(infra, {
            concurrency: options.concurrency,
            durationMs,
            warmupMs,
            rounds: options.rounds ?? (quick ? 1 : 3),
            warmupPassMs: quick ? durationMs : 60_000,
            log,
          }),
        );
      } else if (scenario === 'listing') {
        outcomes.push(
          await listingScenario(infra, {
            subscriptions,
            afterSince: Math.min(1000, Math.max(100, Math.round(subscriptions / 10))),
            concurrency: options.listingConcurrency,
            durationMs,
            warmupMs,
            log,
          }),
        );
      } else if (scenario === 'catchup') {
        const caught = await catchupScenario(infra, { events, profile: options.profile, log });
        fixture = caught.fixture;
        outcomes.push(caught.outcome);
      } else {
        if (!fixture) {
          log('replay needs the catch-up of the same run: running catchup first');
          const caught = await catchupScenario(infra, { events, profile: options.profile, log });
          fixture = caught.fixture;
          outcomes.push(caught.outcome);
        }
        outcomes.push(await replayScenario(fixture, log));
      }
      if (scenario === 'catchup' && !selected.includes('replay')) {
        await fixture?.close();
        fixture = undefined;
      }
    }
    await fixture?.close();
    fixture = undefined;

    const date = started.toISOString().slice(0, 10);
    mkdirSync(out, { recursive: true });
    const charts: Record<string, string> = {};
    for (const outcome of outcomes) {
      const file = join(out, `${date}-${outcome.name}.svg`);
      writeFileSync(file, renderChart(outcome.chart));
      charts[outcome.name] = relative(repoRoot, file);
    }
    const rows = outcomes.flatMap((outcome) => outcome.rows);
    const table = markdownTable(rows);
    const report = {
      date,
      started_at: started.toISOString(),
      finished_at: new Date().toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      commit: gitCommit(),
      quick,
      machine,
      scenarios: outcomes.map((outcome) => outcome.name),
      ...Object.fromEntries(
        outcomes.map((outcome) => [outcome.name, { ...outcome.result, chart: charts[outcome.name] }]),
      ),
      summary: rows,
    };
    const jsonFile = join(out, `${date}.json`);
    writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(out, `${date}.md`), `${table}\n`);
    console.log(table);
    log(`results: ${relative(repoRoot, jsonFile)}, charts: ${Object.values(charts).join(', ')}`);
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
