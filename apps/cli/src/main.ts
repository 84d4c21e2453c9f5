import { Command, CommanderError } from 'commander';
import { AuthStore } from '@castlog/auth';
import { type Config, loadConfig } from '@castlog/config';
import { openDatabase } from '@castlog/runtime';
import { CommandIo, fail } from './commands/command-io';
import { tokensIssue, tokensRevoke } from './commands/tokens.command';
import { usersAdd, usersList, usersRemove } from './commands/users.command';

/** Opens the store for one command and closes it afterwards. */
export type WithStore = <T>(body: (store: AuthStore, config: Config) => Promise<T>) => Promise<T>;

/** The real database: configuration from the environment, DATABASE_URL or the embedded server. */
export const withDatabaseStore =
  (env: NodeJS.ProcessEnv = process.env): WithStore =>
  async (body) => {
    const config = loadConfig(env);
    const database = await openDatabase(config);
    try {
      return await body(new AuthStore(database.dataSource), config);
    } finally {
      await database.close();
    }
  };

/** The `castlog` program. Actions report their exit code through `setExitCode`. */
export function createProgram(
  io: CommandIo,
  withStore: WithStore,
  setExitCode: (code: number) => void,
): Command {
  const program = new Command('castlog')
    .description('Administer a castlog server: users and API tokens.')
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');

  const users = program.command('users').description('Add, list and remove users.');
  users
    .command('add <name>')
    .description('Add a user. The password is read from stdin, or prompted for twice on a terminal.')
    .action(async (name: string) =>
      setExitCode(await withStore((store) => usersAdd({ ...io, store }, name))),
    );
  users
    .command('list')
    .description('List users: name and creation time, tab-separated.')
    .action(async () => setExitCode(await withStore((store) => usersList({ ...io, store }))));
  users
    .command('remove <name>')
    .description('Remove a user and revoke all its tokens.')
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

  return program;
}

/** Runs the CLI and answers its exit code: 0, or 1 after a one-line message on stderr. */
export async function main(
  argv: readonly string[] = process.argv,
  io: CommandIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
  withStore: WithStore = withDatabaseStore(),
): Promise<number> {
  let exitCode = 0;
  const program = createProgram(io, withStore, (code) => (exitCode = code));
  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    return fail(io, error);
  }
}

if (require.main === module) {
  void main().then((code) => (process.exitCode = code));
}
