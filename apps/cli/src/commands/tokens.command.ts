import { AuthStore } from '@castlog/auth';
import { MAX_TOKEN_TTL_MS, parseDuration } from '@castlog/config';
import { CliError, CommandIo, runCommand } from './command-io';

export interface TokensDeps extends Omit<CommandIo, 'stdin'> {
  readonly store: Pick<AuthStore, 'issueToken' | 'revokeToken'>;
  /** Lifetime when --ttl is not given (CLI_TOKEN_TTL), in milliseconds. */
  readonly defaultTtlMs: number;
}

export interface IssueOptions {
  readonly ttl?: string;
}

/** `castlog tokens issue <name> [--ttl 30d]`: prints only the token, on one line of stdout; its id
 * and expiry go to stderr. */
export function tokensIssue(deps: TokensDeps, name: string, options: IssueOptions = {}): Promise<number> {
  return runCommand(deps, async () => {
    const ttlMs = options.ttl === undefined ? deps.defaultTtlMs : parseTtl(options.ttl);
    const issued = await deps.store.issueToken({ name }, 'cli', ttlMs);
    deps.stdout.write(`${issued.token}\n`);
    deps.stderr.write(`Token ${issued.id} for ${name} expires ${issued.expiresAt.toISOString()}\n`);
    return 0;
  });
}

/** `castlog tokens revoke <token-or-id>`. */
export function tokensRevoke(deps: TokensDeps, tokenOrId: string): Promise<number> {
  return runCommand(deps, async () => {
    if (!(await deps.store.revokeToken(tokenOrId))) throw new CliError('no such token');
    deps.stdout.write('Revoked token\n');
    return 0;
  });
}

function parseTtl(text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    throw new CliError(`--ttl must be a duration such as 30d, 12h or 90m, not ${JSON.stringify(text)}`);
  }
  if (ms <= 0) throw new CliError('--ttl must be greater than 0');
  if (!(ms <= MAX_TOKEN_TTL_MS)) throw new CliError('--ttl must be at most 36500d');
  return ms;
}
