import { InvalidCredentialError, UserExistsError, UserNotFoundError } from '@castlog/auth';

/** Where a command writes: process.stdout and process.stderr, or collectors in tests. */
export interface Output {
  write(text: string): unknown;
}

/** Where a command reads: process.stdin, or a Readable in tests. A terminal also has raw mode. */
export interface Input extends AsyncIterable<string | Buffer> {
  readonly isTTY?: boolean;
}

export interface TerminalInput extends Input {
  readonly isRaw?: boolean;
  setRawMode(mode: boolean): unknown;
  setEncoding(encoding: BufferEncoding): unknown;
  on(event: 'data', listener: (chunk: string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeListener(event: 'data', listener: (chunk: string) => void): unknown;
  removeListener(event: 'end', listener: () => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export interface CommandIo {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly stdin: Input;
}

/** An error whose message is meant for the user as it is. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** The error as one line, without a stack. */
export function describeError(error: unknown): string {
  if (error instanceof UserExistsError) return `user ${error.userName} already exists`;
  if (error instanceof UserNotFoundError) return `no user ${error.user}`;
  if (error instanceof CliError || error instanceof InvalidCredentialError) return error.message;
  if (error instanceof AggregateError && error.errors.length > 0 && !error.message) {
    return describeError(error.errors[0]);
  }
  // Not `instanceof Error`: errors of Node's own modules may come from another realm (a test's VM).
  if (typeof error === 'object' && error !== null && 'message' in error) {
    const { message, code, name } = error as { message?: unknown; code?: string; name?: string };
    return oneLine((typeof message === 'string' && message) || code || name || 'Error');
  }
  return String(error);
}

/** Joins the lines of a message: `Invalid configuration:\n  A: x\n  B: y` → `Invalid configuration: A: x; B: y`. */
function oneLine(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines.reduce(
    (joined, line) => (joined === '' ? line : `${joined}${joined.endsWith(':') ? ' ' : '; '}${line}`),
    '',
  );
}

/** Writes `castlog: <message>` on stderr and answers `exitCode` (1 unless given). */
export function fail(io: Pick<CommandIo, 'stderr'>, error: unknown, exitCode = 1): number {
  io.stderr.write(`castlog: ${describeError(error)}\n`);
  return exitCode;
}

/** Runs a command body; any error becomes a one-line message and `failureCode` (1 unless given). */
export async function runCommand(
  io: Pick<CommandIo, 'stderr'>,
  body: () => Promise<number>,
  failureCode = 1,
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    return fail(io, error, failureCode);
  }
}

/** `castlog replay`'s exit status, which scripts and monitors act on: a failure to run is never
 * taken for a difference. */
export const REPLAY_EXIT = { equal: 0, different: 1, couldNotRun: 2 } as const;
