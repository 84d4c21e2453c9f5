import { AuthStore, checkPassword, checkUserName } from '@castlog/auth';
import { CliError, CommandIo, Input, Output, TerminalInput, runCommand } from './command-io';

export interface UsersDeps extends CommandIo {
  readonly store: Pick<AuthStore, 'addUser' | 'listUsers' | 'removeUser' | 'setAdmin'>;
}

/** `castlog users add [--admin] <name>`: the password comes from stdin when it is not a terminal
 * (all of it, less one trailing newline, `\n` or `\r\n`), otherwise from two prompts without echo. */
export function usersAdd(deps: UsersDeps, name: string, options: { admin?: boolean } = {}): Promise<number> {
  return runCommand(deps, async () => {
    checkUserName(name);
    const password = await readNewPassword(deps.stdin, deps.stderr);
    checkPassword(password);
    const admin = options.admin ?? false;
    await deps.store.addUser(name, password, { admin });
    deps.stdout.write(admin ? `Added user ${name}, an administrator\n` : `Added user ${name}\n`);
    return 0;
  });
}

/** `castlog users admin <name> [--off]`: makes the user an administrator, or with `off` no longer. */
export function usersAdmin(deps: UsersDeps, name: string, options: { off?: boolean } = {}): Promise<number> {
  return runCommand(deps, async () => {
    const admin = !(options.off ?? false);
    if (!(await deps.store.setAdmin(name, admin))) throw new CliError(`no user ${name}`);
    deps.stdout.write(
      admin ? `User ${name} is an administrator\n` : `User ${name} is no longer an administrator\n`,
    );
    return 0;
  });
}

/** `castlog users list`: one line per user, `name<TAB>created at`, and `<TAB>admin` for an
 * administrator, by name. */
export function usersList(deps: UsersDeps): Promise<number> {
  return runCommand(deps, async () => {
    const users = await deps.store.listUsers();
    for (const user of users)
      deps.stdout.write(`${user.name}\t${user.createdAt.toISOString()}${user.isAdmin ? '\tadmin' : ''}\n`);
    if (users.length === 0) deps.stderr.write('No users\n');
    return 0;
  });
}

/** `castlog users remove <name>`: removes the user and all its tokens and app passwords. */
export function usersRemove(deps: UsersDeps, name: string): Promise<number> {
  return runCommand(deps, async () => {
    if (!(await deps.store.removeUser(name))) throw new CliError(`no user ${name}`);
    deps.stdout.write(`Removed user ${name}\n`);
    return 0;
  });
}

async function readNewPassword(stdin: Input, prompts: Output): Promise<string> {
  if (!stdin.isTTY) {
    const text = await readAll(stdin);
    if (text === '') throw new CliError('no password on stdin');
    return text.replace(/\r?\n$/, '');
  }
  const terminal = stdin as TerminalInput;
  const first = await promptHidden('Password: ', terminal, prompts);
  const second = await promptHidden('Repeat password: ', terminal, prompts);
  if (first !== second) throw new CliError('the passwords do not match');
  return first;
}

/** All of stdin as UTF-8. */
export async function readAll(stdin: Input): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads one line from the terminal in raw mode, echoing nothing. Ctrl-C cancels, backspace
 * deletes, escape sequences (arrow keys) are ignored. */
export function promptHidden(prompt: string, stdin: TerminalInput, output: Output): Promise<string> {
  output.write(prompt);
  return new Promise((resolve, reject) => {
    let value = '';
    const wasRaw = stdin.isRaw ?? false;
    const finish = (error?: Error) => {
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.setRawMode(wasRaw);
      stdin.pause();
      output.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      // eslint-disable-next-line no-control-regex
      for (const char of chunk.replace(/\x1b(\[[0-9;?]*[ -/]*[@-~]|.)?/g, '')) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') return finish(new CliError('cancelled'));
        if (char === '\u0004') return finish(value === '' ? new CliError('cancelled') : undefined);
        if (char === '\u007f' || char === '\b') value = [...value].slice(0, -1).join('');
        else if (char >= ' ') value += char;
      }
    };
    const onEnd = () => finish(new CliError('no password entered'));
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.resume();
  });
}
