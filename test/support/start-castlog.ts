import { AuthStore } from '@castlog/auth';
import { Config, loadConfig } from '@castlog/config';
import { apiHttpOptions } from '@castlog/api';
import { createHttpApp } from '@castlog/http';
import { OpenedRuntime, openRuntime } from '@castlog/runtime';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import { ApiAppModule } from '../../apps/api/src/api-app.module';
import { EmbeddedAppModule } from '../../apps/embedded/src/embedded-app.module';
import { ProjectorAppModule } from '../../apps/projector/src/projector-app.module';
import { NestFactory } from '@nestjs/core';
import { ApiClient } from './api-client';
import { createTestDatabase, uniqueName } from './databases';
import { until } from './until';
import { childEnv } from './processes';
import { checkAgainstOpenApi, RecordedResponse } from './openapi-check';
import { untilProjectionAtEnd } from './projection';

export interface TestUser {
  readonly id: string;
  readonly name: string;
  readonly password: string;
  readonly token: string;
}

export interface CastlogUnderTest {
  readonly url: string;
  readonly databaseUrl: string;
  readonly runtime: OpenedRuntime;
  readonly config: Config;
  readonly users: AuthStore;
  readonly anonymous: ApiClient;
  freshUser(): Promise<TestUser>;
  as(user: TestUser): ApiClient;
  until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Waits until this app's own projection (its schema) has applied everything in the log. */
  untilProjectionAtEnd(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export type EventLogKind = 'kafka' | 'postgres';

/** The whole service in this process — API, projector and deletion saga — on a fresh database and,
 * for the Kafka log, a fresh topic and consumer group, so test files never share data. */
export async function startCastlog(
  options: {
    log?: EventLogKind;
    env?: Record<string, string>;
    projector?: boolean;
    /** Where the HTTP app logs (nowhere unless given). */
    logger?: Logger;
  } = {},
): Promise<CastlogUnderTest> {
  const databaseUrl = await createTestDatabase();
  const kafka = (options.log ?? 'kafka') === 'kafka';
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    ...(kafka ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : {}),
    KAFKA_TOPIC: uniqueName('castlog'),
    KAFKA_PARTITIONS: '3',
    PROJECTOR_GROUP: uniqueName('projector'),
    RATE_LIMIT_PER_MINUTE: '0',
    READ_YOUR_WRITES_TIMEOUT: '15s',
    LOG_LEVEL: 'warn',
    // The feed resolver would fetch the made-up feed URLs tests subscribe to: a test opts in.
    FEEDS: 'off',
    FEEDS_GROUP: uniqueName('feeds'),
    ...options.env,
  });
  const runtime = await openRuntime(config);
  let app: NestFastifyApplication | undefined;
  try {
    const module =
      options.projector === false ? ApiAppModule.forRuntime(runtime) : EmbeddedAppModule.forRuntime(runtime);
    app = await createHttpApp(module, config, options.logger, apiHttpOptions(config));
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (error) {
    await app?.close();
    await runtime.close();
    throw error;
  }
  const url = await app.getUrl();
  const users = new AuthStore(runtime.database.dataSource);
  const recorded: RecordedResponse[] = [];
  const anonymous = new ApiClient(url, undefined, (response) => recorded.push(response));
  return {
    url,
    databaseUrl,
    runtime,
    config,
    users,
    anonymous,
    async freshUser() {
      const name = uniqueName('user');
      const password = randomBytes(12).toString('base64url');
      const user = await users.addUser(name, password);
      const { token } = await users.issueToken(name, 'cli', 3_600_000);
      return { id: user.id, name, password, token };
    },
    as: (user) => anonymous.withAuthorization(`Bearer ${user.token}`),
    until: (what, check, timeoutMs) => until(databaseUrl, what, check, { timeoutMs }),
    untilProjectionAtEnd: (timeoutMs) =>
      untilProjectionAtEnd(
        databaseUrl,
        runtime.eventLog,
        runtime.database.dataSource,
        runtime.database.schema,
        timeoutMs,
      ),
    /** Also checks every answer this app gave through its clients against its served OpenAPI
     * document, so the document cannot drift from what the routes answer. */
    async close() {
      let problems: string[] = [];
      try {
        const document = await (await fetch(new URL('/openapi.json', url))).json();
        problems = checkAgainstOpenApi(document as Parameters<typeof checkAgainstOpenApi>[0], recorded);
      } finally {
        await app?.close();
        await runtime.close();
      }
      if (problems.length > 0)
        throw new Error(`answers that do not match /openapi.json:\n${problems.join('\n')}`);
    },
  };
}

/** A projector (with its deletion saga) in this process, on the same database and log as `app`. */
export async function startProjector(config: Config): Promise<{ close(): Promise<void> }> {
  const runtime = await openRuntime(config);
  const context = await NestFactory.createApplicationContext(ProjectorAppModule.forRuntime(runtime), {
    logger: false,
  });
  await context.init();
  return {
    async close() {
      await context.close();
      await runtime.close();
    },
  };
}

/** The environment of a child projector (the built app) on the same database, topic, group and
 * schema as `app`, serving health and metrics on a port of its own: test files run at once, and
 * two children on the default port would refuse each other (EADDRINUSE). */
export const childProjectorEnv = (
  app: CastlogUnderTest,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv =>
  childEnv({
    DATABASE_URL: app.databaseUrl,
    KAFKA_BROKERS: app.config.KAFKA_BROKERS,
    KAFKA_TOPIC: app.config.KAFKA_TOPIC,
    KAFKA_PARTITIONS: String(app.config.KAFKA_PARTITIONS),
    PROJECTOR_GROUP: app.config.PROJECTOR_GROUP,
    READ_MODEL_SCHEMA: app.config.READ_MODEL_SCHEMA,
    LOG_LEVEL: 'warn',
    PORT: '0',
    ...extra,
  });
