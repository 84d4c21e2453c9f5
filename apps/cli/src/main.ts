import { Command, CommanderError } from 'commander';
import { AuthStore } from '@castlog/auth';
import { type Config, loadConfig } from '@castlog/config';
import { EventLog } from '@castlog/event-log';
import { ProjectionVersions } from '@castlog/read-model';
// The runtime's opening alone: the CLI has no use for the HTTP stack the package's index loads, and a
// command should answer quickly.
import { embeddedPostgresDir, openDatabase, openRuntime } from '@castlog/runtime/open-runtime';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { CliError, CommandIo, describeError, fail, REPLAY_EXIT, runCommand } from './commands/command-io';
import { tokensIssue, tokensRevoke } from './commands/tokens.command';
import { usersAdd, usersAdmin, usersList, usersRemove } from './commands/users.command';

/** Without DATABASE_URL, a command on a data directory that holds no database yet (CASTLOG_DATA_DIR
 * is relative to the working directory) creates one: said on stderr, so that an empty answer from
 * a new database is not mistaken for the server's. */
function sayWhenNew(config: Config): void {
  const dataDir = embeddedPostgresDir(config);
  if (!config.DATABASE_URL && !existsSync(join(dataDir, 'PG_VERSION')))
    process.stderr.write(`castlog: no database in ${dataDir} yet: creating one (CASTLOG_DATA_DIR)\n`);
}

/** `open`'s result; its failure names what could not be reached, where the client's message names
 * only an address (`connect ECONNREFUSED 127.0.0.1:5432`). */
async function reaching<T>(config: Config, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    const what = unreachable(config, error);
    throw what ? new CliError(`cannot reach ${what}: ${describeError(error)}`) : error;
  }
}

/** kafkajs's errors for a broker it could not talk to; others (a refused topic, authorisation) are
 * answers from a broker it reached, and keep their own message. */
const KAFKA_OUT_OF_REACH = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSRequestTimeoutError',
]);

function unreachable(config: Config, error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { name, port, hostname } = error as { name?: string; port?: number; hostname?: string };
  if (config.KAFKA_BROKERS && name !== undefined && KAFKA_OUT_OF_REACH.has(name))
    return `Kafka at ${config.KAFKA_BROKERS} (KAFKA_BROKERS)`;
  if (!config.DATABASE_URL) return undefined;
  const server = new URL(config.DATABASE_URL);
  const named = port === Number(server.port || 5432) || hostname === server.hostname;
  return named ? `PostgreSQL at ${server.host} (DATABASE_URL)` : undefined;
}

/** Opens the store for one command and closes it afterwards. */
export type WithStore = <T>(body: (store: AuthStore, config: Config) => Promise<T>) => Promise<T>;

/** The real database: configuration from the environment, DATABASE_URL or the embedded server. */
export const withDatabaseStore =
  (env: NodeJS.ProcessEnv = process.env): WithStore =>
  async (body) => {
    const config = loadConfig(env);
    sayWhenNew(config);
    const database = await reaching(config, () => openDatabase(config));
    try {
      return await body(new AuthStore(database.dataSource), config);
    } finally {
      await database.close();
    }
  };

/** What replay and history read: the read-model database and the event log, no consumer. */
export interface LogAndDatabase {
  readonly dataSource: DataSource;
  /** The schema of the projection version that serves reads. */
  readonly schema: string;
  readonly versions: ProjectionVersions;
  readonly eventLog: EventLog;
}

/** Opens the database and the event log for one command and closes them afterwards. */
export type WithLog = <T>(body: (opened: LogAndDatabase, config: Config) => Promise<T>) => Promise<T>;

/** The real database and log: DATABASE_URL or the embedded server, Kafka when KAFKA_BROKERS is set
 * or else the table log. Neither the projector nor the saga runs. */
export const withDatabaseAndLog =
  (env: NodeJS.ProcessEnv = process.env): WithLog =>
  async (body) => {
    const config = loadConfig(env);
    sayWhenNew(config);
    // The CLI's pool holds what its heaviest command, a replay, holds at once; the others use one
    // connection at a time.
    const { REPLAY_CONNECTIONS } = await import('@castlog/replay');
    const runtime = await reaching(config, () =>
      openRuntime(config, { command: true, poolSize: REPLAY_CONNECTIONS }),
    );
    try {
      const { readModel, database, eventLog } = runtime;
      return await body(
        { dataSource: database.dataSource, schema: readModel.schema, versions: readModel.versions, eventLog },
        config,
      );
    } finally {
      await runtime.close();
    }
  };

/** The `castlog` program. Actions report their exit code through `setExitCode`. */
export function createProgram(
  io: CommandIo,
  withStore: WithStore,
  setExitCode: (code: number) => void,
  withLog: WithLog = withDatabaseAndLog(),
): Command {
  const program = new Command('castlog')
    .description(
      'Administer a castlog server: users, API tokens, replay, history, projection versions and OPML.',
    )
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // A usage error is one line like every other failure: `castlog: <what> (castlog --help …)`.
      outputError: (text, write) =>
        write(`castlog: ${text.trim().replace(/^error: /, '')} (castlog --help for usage)\n`),
    })
    .exitOverride();

  addAccountCommands(program, io, withStore, setExitCode);
  addReplayCommand(program, io, withLog, setExitCode);
  addReadCommands(program, io, withLog, setExitCode);
  return program;
}

/** `users` and `tokens`: the accounts, on the database alone. */
function addAccountCommands(
  program: Command,
  io: CommandIo,
  withStore: WithStore,
  setExitCode: (code: number) => void,
): void {
  const users = program.command('users').description('Add, list and remove users, and name administrators.');
  users
    .command('add <name>')
    .description('Add a user. The password is read from stdin, or prompted for twice on a terminal.')
    .option('--admin', 'make the user an administrator')
    .action(async (name: string, options: { admin?: boolean }) =>
      setExitCode(await withStore((store) => usersAdd({ ...io, store }, name, options))),
    );
  users
    .command('admin <name>')
    .description('Make a user an administrator (of the web pages), or with --off no longer.')
    .option('--off', 'take the administrator role away')
    .action(async (name: string, options: { off?: boolean }) =>
      setExitCode(await withStore((store) => usersAdmin({ ...io, store }, name, options))),
    );
  users
    .command('list')
    .description('List users: name and creation time, tab-separated, and "admin" for administrators.')
    .action(async () => setExitCode(await withStore((store) => usersList({ ...io, store }))));
  users
    .command('remove <name>')
    .description('Remove a user and revoke all its tokens and app passwords.')
    .action(async (name: string) =>
      setExitCode(await withStore((store) => usersRemove({ ...io, store }, name))),
    );

  const tokens = program.command('tokens').description('Issue and revoke API tokens.');
  tokens
    .command('issue <name>')
    .description('Issue a bearer token for a user and print it (only it) on stdout.')
    .option('--ttl <duration>', 'lifetime such as 30d, 12h or 90m (default: CLI_TOKEN_TTL)')
    .action(async (name: string, options: { ttl?: string }) =>
      setExitCode(
        await withStore((store, config) =>
          tokensIssue({ ...io, store, defaultTtlMs: config.CLI_TOKEN_TTL }, name, options),
        ),
      ),
    );
  tokens
    .command('revoke <token-or-id>')
    .description('Revoke a token, given as its text or its id.')
    .action(async (tokenOrId: string) =>
      setExitCode(
        await withStore((store, config) =>
          tokensRevoke({ ...io, store, defaultTtlMs: config.CLI_TOKEN_TTL }, tokenOrId),
        ),
      ),
    );
}

/** `replay [--verify]`: exit 0 equal (or replayed), 1 different, 2 could not run. */
function addReplayCommand(
  program: Command,
  io: CommandIo,
  withLog: WithLog,
  setExitCode: (code: number) => void,
): void {
  const replayCommand = program
    .command('replay')
    .description(
      'Rebuild the read model from offset 0 of the log into a scratch schema (dropped first); with ' +
        '--verify, compare it with the live read model. Rides out PostgreSQL or Kafka out of reach for ' +
        'a while. Exit status: 0 equal (or replayed), 1 different, 2 could not run.',
    )
    .option('--verify', 'compare the replay with the live read model')
    .option('--schema <scratch>', 'the scratch schema (default: <READ_MODEL_SCHEMA>_replay)')
    .action(async (options: { verify?: boolean; schema?: string }) =>
      setExitCode(
        await runCommand(
          io,
          () =>
            withLog(async (opened, config) =>
              (await import('./commands/replay.command')).replay(
                {
                  ...io,
                  dataSource: opened.dataSource,
                  eventLog: opened.eventLog,
                  liveSchema: opened.schema,
                  readModelBase: config.READ_MODEL_SCHEMA,
                },
                options,
              ),
            ),
          REPLAY_EXIT.couldNotRun,
        ),
      ),
    );
  // A usage error is a replay that could not run, never a difference.
  replayCommand.exitOverride((error) => {
    throw error.exitCode === 0
      ? error
      : new CommanderError(REPLAY_EXIT.couldNotRun, error.code, error.message);
  });
}

/** `history`, `projections` and `opml`: reads of the log and the read model (and OPML's import). */
function addReadCommands(
  program: Command,
  io: CommandIo,
  withLog: WithLog,
  setExitCode: (code: number) => void,
): void {
  program
    .command('history <user>')
    .description("A user's events in log order, with what each did; --guid keeps one subscription's.")
    .option('--guid <guid>', 'only the events that concern the subscription with this guid')
    .option('--json', 'one JSON array instead of a table')
    .action(async (user: string, options: { guid?: string; json?: boolean }) =>
      setExitCode(
        await withLog(async (opened) =>
          (await import('./commands/history.command')).history({ ...io, ...opened }, user, options),
        ),
      ),
    );

  program
    .command('projections')
    .description('The projection versions: which one serves reads, and how far each has got through the log.')
    .option('--json', 'one JSON array instead of a table')
    .action(async (options: { json?: boolean }) =>
      setExitCode(
        await withLog(async (opened) =>
          (await import('./commands/projections.command')).projections({ ...io, ...opened }, options),
        ),
      ),
    );

  const opml = program.command('opml').description("Export and import a user's subscriptions as OPML.");
  opml
    .command('export <user>')
    .description("The user's subscribed feeds as an OPML 2.0 document, on stdout or in a file.")
    .option('--output <file>', 'write the document to this file instead of stdout')
    .action(async (user: string, options: { output?: string }) =>
      setExitCode(
        await withLog(async (opened) =>
          (await import('./commands/opml.command')).opmlExport({ ...io, ...opened }, user, options),
        ),
      ),
    );
  opml
    .command('import <user> <file>')
    .description(
      'Subscribe the user to every feed of an OPML file (as a POST of them would), wait until they ' +
        'are applied and report how many it subscribed (new or already held) and which failed. Progress goes to stderr.',
    )
    .option('--timeout <duration>', 'how long to wait for the next outcome, such as 30s or 2m (default: 60s)')
    .action(async (user: string, file: string, options: { timeout?: string }) =>
      setExitCode(
        await withLog(async (opened) =>
          (await import('./commands/opml.command')).opmlImport({ ...io, ...opened }, user, file, options),
        ),
      ),
    );
}

/** Runs the CLI and answers its exit code: 0, or 1 after a one-line message on stderr. */
export async function main(
  argv: readonly string[] = process.argv,
  io: CommandIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
  withStore: WithStore = withDatabaseStore(),
  withLog: WithLog = withDatabaseAndLog(),
): Promise<number> {
  let exitCode = 0;
  const program = createProgram(io, withStore, (code) => (exitCode = code), withLog);
  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    return fail(io, error);
  }
}

/** A reader that goes away (`castlog history alice | head -1`) ends the output: the command stops
 * quietly, as Unix tools do. Any other write failure (a full disk) is one line on stderr and exit
 * code 1, instead of Node's stack trace for an unhandled stream error. */
export function handleOutputErrors(exit: (code: number) => void = (code) => process.exit(code)): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') return exit(0);
    process.stderr.write(`castlog: cannot write the output: ${error.message}\n`);
    exit(1);
  });
  process.stderr.on('error', () => exit(1));
}

if (require.main === module) {
  handleOutputErrors();
  void main().then((code) => (process.exitCode = code));
}
