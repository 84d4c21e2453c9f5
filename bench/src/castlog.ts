import { AuthStore } from '@castlog/auth';
import { Config, loadConfig } from '@castlog/config';
import { createHttpApp } from '@castlog/http';
import { onServer, withDatabase } from '@castlog/infra';
import { Metrics, OpenedRuntime, openRuntime } from '@castlog/runtime';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Kafka, logLevel } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { EmbeddedAppModule } from '../../apps/embedded/src/embedded-app.module';

/** A unique lower-case name for this run's databases, topics and schemas. */
export const uniqueName = (prefix: string): string =>
  `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;

/** A fresh database on the server, and how to drop it. */
export async function createDatabase(
  serverUrl: string,
  name: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  return {
    url: withDatabase(serverUrl, name),
    drop: () =>
      onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

export async function deleteTopics(brokers: string, topics: readonly string[]): Promise<void> {
  const admin = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const mine = topics.filter((topic) => existing.has(topic));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

/** The scaled-mode settings of a bench run: its own database, topic and consumer group, no rate
 * limit (64 clients of a few users would hit it), a generous read-your-writes bound; `env`: settings
 * given with `--set` (`castlogSettings`), over those. */
export function benchConfig(
  databaseUrl: string,
  kafkaBrokers: string,
  env: Record<string, string> = {},
): Config {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: kafkaBrokers,
    KAFKA_TOPIC: uniqueName('castlog_bench'),
    PROJECTOR_GROUP: uniqueName('bench_projector'),
    RATE_LIMIT_PER_MINUTE: '0',
    READ_YOUR_WRITES_TIMEOUT: '30s',
    LOG_LEVEL: 'warn',
    // The feed resolver would fetch the made-up feed URLs the scenarios subscribe to, beside what
    // they measure: the feeds scenario, which measures it, turns it on.
    FEEDS: 'off',
    ...env,
  });
}

export interface BenchUser {
  readonly id: string;
  readonly name: string;
  /** For the scenarios that sign in (the web pages). */
  readonly password: string;
  readonly token: string;
}

export interface RunningCastlog {
  readonly port: number;
  readonly config: Config;
  readonly runtime: OpenedRuntime;
  /** Users with a CLI (Bearer) token each; created with a cheap scrypt cost, as tokens are what the
   * scenarios send (a password signs in once at most). */
  addUsers(count: number): Promise<BenchUser[]>;
  /** Sum and count of each of castlog's own histograms (all labels together), for stage means. */
  histograms(): Promise<Record<string, HistogramTotals>>;
  /** The projector's transactions so far, paired with their events (see ApplyTotals). */
  applies(): ApplyTotals;
  close(): Promise<void>;
}

/** Subscribes `user` to the feeds numbered `from` to `to` (exclusive) under `name`, with `/v1` POSTs
 * of 100, each answered once applied. */
export async function subscribeOverHttp(
  port: number,
  user: BenchUser,
  name: string,
  from: number,
  to: number,
): Promise<void> {
  for (let first = from; first < to; first += 100) {
    const response = await fetch(`http://127.0.0.1:${port}/v1/subscriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subscriptions: Array.from({ length: Math.min(100, to - first) }, (_, i) => ({
          feed_url: `https://feeds.bench.example/${name}/${first + i}.xml`,
        })),
      }),
    });
    if (response.status !== 200)
      throw new Error(`POST answered ${response.status}: ${await response.text()}`);
  }
}

export interface HistogramTotals {
  readonly sum: number;
  readonly count: number;
}

/** castlog's projector reports each transaction's duration and then, at once, its event count
 * (castlog_projector_batch_apply_seconds, castlog_projector_batch_size). Paired here, they give
 * the time of the transaction that applied an event, averaged over events rather than over
 * transactions: what a request's wait spends in the transaction that applies it. */
export interface ApplyTotals {
  readonly transactions: number;
  readonly events: number;
  /** Σ (events × seconds) over the transactions. */
  readonly eventSeconds: number;
}

type Observe = (...args: unknown[]) => void;

/** Wraps the two histograms' `observe` (which prom-client's timers call too) to pair each
 * transaction's duration with the event count observed right after it. */
function pairApplies(metrics: Metrics): () => ApplyTotals {
  const totals = { transactions: 0, events: 0, eventSeconds: 0 };
  let lastSeconds: number | undefined;
  const valueOf = (args: unknown[]): number => Number(typeof args[0] === 'number' ? args[0] : args[1]);
  const duration = metrics.batchDuration as unknown as { observe: Observe };
  const size = metrics.batchSize as unknown as { observe: Observe };
  const observeDuration = duration.observe.bind(duration);
  const observeSize = size.observe.bind(size);
  duration.observe = (...args) => {
    lastSeconds = valueOf(args);
    observeDuration(...args);
  };
  size.observe = (...args) => {
    const events = valueOf(args);
    if (lastSeconds !== undefined) {
      totals.transactions += 1;
      totals.events += events;
      totals.eventSeconds += events * lastSeconds;
      lastSeconds = undefined;
    }
    observeSize(...args);
  };
  return () => ({ ...totals });
}

/** Mean of each histogram between two snapshots, in the histogram's unit. */
export function histogramMeans(
  before: Record<string, HistogramTotals>,
  after: Record<string, HistogramTotals>,
): Record<string, { mean: number; count: number }> {
  return Object.fromEntries(
    Object.entries(after).map(([name, totals]) => {
      const count = totals.count - (before[name]?.count ?? 0);
      const sum = totals.sum - (before[name]?.sum ?? 0);
      return [name, { mean: count > 0 ? sum / count : Number.NaN, count }];
    }),
  );
}

/** API, projector and deletion saga in this process (the embedded app module on the scaled
 * runtime: Kafka log, PostgreSQL read model), listening on 127.0.0.1 only, without request logs. */
export async function startCastlog(config: Config): Promise<RunningCastlog> {
  const runtime = await openRuntime(config);
  let app: NestFastifyApplication | undefined;
  try {
    app = await createHttpApp(EmbeddedAppModule.forRuntime(runtime), config);
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (error) {
    await app?.close();
    await runtime.close();
    throw error;
  }
  const port = Number(new URL(await app.getUrl()).port);
  const metrics = app.get(Metrics, { strict: false });
  const applies = pairApplies(metrics);
  const store = new AuthStore(runtime.database.dataSource, { passwordParams: { N: 1024, r: 8, p: 1 } });
  return {
    port,
    config,
    runtime,
    async addUsers(count) {
      const prefix = uniqueName('bench');
      const users: BenchUser[] = [];
      for (let i = 0; i < count; i += 1) {
        const name = `${prefix}_${i}`;
        const password = randomBytes(12).toString('base64url');
        const user = await store.addUser(name, password);
        const { token } = await store.issueToken(name, 'cli', 24 * 3_600_000);
        users.push({ id: user.id, name, password, token });
      }
      return users;
    },
    applies,
    async histograms() {
      const totals: Record<string, HistogramTotals> = {};
      for (const metric of await metrics.registry.getMetricsAsJSON()) {
        if (String(metric.type) !== 'histogram' || !metric.name.startsWith('castlog_')) continue;
        let sum = 0;
        let count = 0;
        for (const value of metric.values as { metricName?: string; value: number }[]) {
          if (value.metricName?.endsWith('_sum')) sum += value.value;
          if (value.metricName?.endsWith('_count')) count += value.value;
        }
        totals[metric.name] = { sum, count };
      }
      return totals;
    },
    async close() {
      await app?.close();
      await runtime.close();
    },
  };
}
