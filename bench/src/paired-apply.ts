/** `node dist/bench/src/paired-apply.js <build-a> <build-b> [events] [runs]`: the projector's
 * transactions of two builds (each a checkout with `dist/` compiled, this one for either) side by
 * side in one process, so that both meet the same machine at the same moment. Each build applies
 * the catch-up's event mix through its own `applyBatch` into a database of its own, in transactions
 * of 2,000 events over 12 partitions, one transaction at a time; the builds take turns transaction
 * by transaction, alternating which goes first. Measured per build: PostgreSQL's CPU (its backend's
 * utime + stime from /proc: the pool has one connection), Node's CPU around each call and its time.
 * Writes `bench/results/exploratory/<timestamp>-paired-apply.json` with each run's figures and b / a.
 * On a machine whose speed drifts by a quarter from one minute to the next, this tells apart
 * differences of a few per cent that alternating whole bench runs cannot. */
import type { applyBatch as ApplyBatch } from '@castlog/projection';
import type { openDatabaseAt as OpenDatabaseAt } from '@castlog/runtime';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createDatabase, uniqueName } from './castlog';
import { EventMix } from './event-mix';
import { loadAverage, sourceState, timestampOf, writeNewFile } from './run-record';
import { formatSpread, spreadOf } from './stats';

const PARTITIONS = 12;
const TRANSACTION_EVENTS = 2_000;
const USERS = 20_000;
const SCHEMA = 'castlog';

/** A backend's CPU so far, in seconds (Linux: utime and stime are fields 14 and 15, in ticks of
 * 1/100 s). */
const backendCpuSeconds = (pid: number): number => {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

interface Side {
  readonly root: string;
  readonly applyBatch: typeof ApplyBatch;
  readonly openDatabaseAt: typeof OpenDatabaseAt;
}

interface Totals {
  postgres_cpu_s: number;
  node_cpu_s: number;
  seconds: number;
}

type Transaction = { partition: number; records: unknown[] }[];

/** The mix's events as records of 12 partitions (a user's always in the same one), cut into
 * transactions, as JSON: each build decodes its own copy, as a projector would. */
function transactionsOf(events: number): string[] {
  const partitionOf = new Map<string, number>();
  const nextOffset = new Array<number>(PARTITIONS).fill(0);
  const texts: string[] = [];
  const envelopes = new EventMix(USERS, 7).next(events);
  for (let start = 0; start < envelopes.length; start += TRANSACTION_EVENTS) {
    const byPartition = new Map<number, unknown[]>();
    envelopes.slice(start, start + TRANSACTION_EVENTS).forEach((envelope, i) => {
      const partition = partitionOf.get(envelope.key) ?? partitionOf.size % PARTITIONS;
      partitionOf.set(envelope.key, partition);
      const offset = nextOffset[partition] ?? 0;
      nextOffset[partition] = offset + 1;
      const record = {
        key: envelope.key,
        type: envelope.type,
        version: envelope.version,
        eventId: envelope.eventId,
        requestId: envelope.requestId,
        value: envelope.value,
        partition,
        offset,
        timestamp: 1_700_000_000_000 + start + i,
      };
      const records = byPartition.get(partition);
      if (records) records.push(record);
      else byPartition.set(partition, [record]);
    });
    const transaction: Transaction = [...byPartition].map(([partition, records]) => ({ partition, records }));
    texts.push(JSON.stringify(transaction));
  }
  return texts;
}

async function run(sides: readonly Side[], transactions: readonly string[]): Promise<Totals[]> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL is not set (npm run infra:up writes one)');
  const opened = [];
  for (const side of sides) {
    const database = await createDatabase(serverUrl, uniqueName('bench_paired'));
    const readModel = await side.openDatabaseAt(database.url, SCHEMA, 1);
    const [row] = (await readModel.dataSource.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
    opened.push({ side, database, readModel, pid: row?.pid ?? 0 });
  }
  const totals: Totals[] = sides.map(() => ({ postgres_cpu_s: 0, node_cpu_s: 0, seconds: 0 }));
  try {
    for (const [i, text] of transactions.entries()) {
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const k of order) {
        const { side, readModel, pid } = opened[k] as (typeof opened)[number];
        const total = totals[k] as Totals;
        const batches = JSON.parse(text) as Parameters<typeof ApplyBatch>[2];
        const postgres = backendCpuSeconds(pid);
        const cpu = process.cpuUsage();
        const started = performance.now();
        await side.applyBatch(readModel.dataSource, SCHEMA, batches, PARTITIONS);
        total.seconds += (performance.now() - started) / 1000;
        const used = process.cpuUsage(cpu);
        total.node_cpu_s += (used.user + used.system) / 1e6;
        total.postgres_cpu_s += backendCpuSeconds(pid) - postgres;
      }
    }
  } finally {
    for (const { readModel, database } of opened) {
      await readModel.close();
      await database.drop();
    }
  }
  return totals;
}

async function main(): Promise<void> {
  const [a, b, eventsArg, runsArg] = process.argv.slice(2);
  if (!a || !b) throw new Error('usage: paired-apply.js <build-a> <build-b> [events] [runs]');
  const events = Number(eventsArg ?? 100_000);
  const runs = Number(runsArg ?? 3);
  const roots = [resolve(a), resolve(b)];
  const sides: Side[] = [];
  for (const root of roots) {
    const projection = (await import(
      join(root, 'dist/libs/projection/src')
    )) as typeof import('@castlog/projection');
    const runtime = (await import(
      join(root, 'dist/libs/runtime/src/database')
    )) as typeof import('@castlog/runtime');
    sides.push({ root, applyBatch: projection.applyBatch, openDatabaseAt: runtime.openDatabaseAt });
  }
  const startedAt = new Date();
  const load = loadAverage();
  const transactions = transactionsOf(events);
  const results: Totals[][] = [];
  for (let r = 0; r < runs; r += 1) {
    const totals = await run(sides, transactions);
    results.push(totals);
    const [ta, tb] = totals as [Totals, Totals];
    console.log(
      `run ${r + 1}: PostgreSQL CPU ${ta.postgres_cpu_s.toFixed(2)} / ${tb.postgres_cpu_s.toFixed(2)} s, ` +
        `Node CPU ${ta.node_cpu_s.toFixed(2)} / ${tb.node_cpu_s.toFixed(2)} s, ` +
        `time ${ta.seconds.toFixed(2)} / ${tb.seconds.toFixed(2)} s (a / b)`,
    );
  }
  const ratios = (pick: (t: Totals) => number) =>
    spreadOf(
      results.map(([ta, tb]) => pick(tb as Totals) / pick(ta as Totals)),
      3,
    );
  const ratio = {
    postgres_cpu: ratios((t) => t.postgres_cpu_s),
    node_cpu: ratios((t) => t.node_cpu_s),
    seconds: ratios((t) => t.seconds),
  };
  console.log(
    `b / a, median (min-max) of ${runs} runs: PostgreSQL CPU ${formatSpread(ratio.postgres_cpu)}, ` +
      `Node CPU ${formatSpread(ratio.node_cpu)}, time ${formatSpread(ratio.seconds)}`,
  );
  const repoRoot = resolve(__dirname, '..', '..', '..');
  const file = writeNewFile(
    join(repoRoot, 'bench', 'results', 'exploratory'),
    `${timestampOf(startedAt)}-paired-apply`,
    '.json',
    `${JSON.stringify(
      {
        command: `node dist/bench/src/paired-apply.js ${process.argv.slice(2).join(' ')}`,
        started_at: startedAt.toISOString(),
        load_average_before: load,
        settings: {
          events,
          runs,
          partitions: PARTITIONS,
          transaction_events: TRANSACTION_EVENTS,
          users: USERS,
        },
        builds: roots.map((root, i) => ({ side: i === 0 ? 'a' : 'b', root, source: sourceState(root) })),
        runs: results.map(([ta, tb]) => ({ a: ta, b: tb })),
        b_over_a: ratio,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`results: ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
