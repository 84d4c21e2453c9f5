import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True while `pid` runs and (where /proc exists) its command line contains `marker`, so a pid reused
 * by an unrelated process, or a zombie, counts as gone. */
export function isAlive(pid: number, marker: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
  } catch {
    return process.platform !== 'linux';
  }
}

/** Sends `signal`, waits up to `graceMs` for the process to go, then sends `force` and waits again. */
export async function stopProcess(
  pid: number,
  marker: string,
  signal: NodeJS.Signals,
  graceMs: number,
  force: NodeJS.Signals,
): Promise<void> {
  for (const [sig, waitMs] of [
    [signal, graceMs],
    [force, 10_000],
  ] as const) {
    if (!isAlive(pid, marker)) return;
    process.kill(pid, sig);
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      if (!isAlive(pid, marker)) return;
      await sleep(100);
    }
  }
  throw new Error(`process ${pid} did not exit after ${signal} and ${force}`);
}

/** Polls `probe` every 250 ms until it answers true, `exited` reports the process gone, or the deadline. */
export async function pollUntil(
  what: string,
  timeoutMs: number,
  probe: () => Promise<boolean>,
  exited: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gone = exited();
    if (gone) throw new Error(`${what} exited before it was ready (${gone})`);
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${what} did not answer within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

export interface Daemon {
  child: ChildProcess;
  /** How the process ended ("exit code 1"), or undefined while it runs. */
  exited(): string | undefined;
  /** Resolves once the ended process has been reaped: until then its pid is a zombie that signals
   * still reach. Gives up waiting after 10 s. */
  reaped(): Promise<void>;
}

/** Starts a long-running server with stdout and stderr appended to `logFile`. Detached, it gets its own
 * session and outlives us; otherwise it shares our process group (a Ctrl-C reaches it too) and is sent
 * `stopSignal` if we exit without stopping it. Either way it does not keep our event loop alive. */
export function spawnDaemon(
  command: string,
  args: string[],
  opts: {
    logFile: string;
    detached: boolean;
    stopSignal: NodeJS.Signals;
    uid?: number;
    gid?: number;
    env?: NodeJS.ProcessEnv;
    /** Its working directory; ours when not given. */
    cwd?: string;
  },
): Daemon {
  const fd = openSync(opts.logFile, 'a');
  let status: string | undefined;
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      detached: opts.detached,
      stdio: ['ignore', fd, fd],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.gid }),
    });
  } finally {
    closeSync(fd);
  }
  child.on('error', (error) => (status = error.message));
  const exit = new Promise<void>((resolve) =>
    child.on('exit', (code, signal) => {
      status = signal ? `signal ${signal}` : `exit code ${code}`;
      resolve();
    }),
  );
  if (!opts.detached) {
    const onExit = (): void => void child.kill(opts.stopSignal);
    process.once('exit', onExit);
    child.once('exit', () => process.off('exit', onExit));
  }
  child.unref();
  // While someone waits for the exit, the child and the bound hold the event loop open: otherwise
  // Node could end the process (with code 0) before the exit event arrives.
  const reaped = async () => {
    let timer: NodeJS.Timeout | undefined;
    child.ref();
    try {
      await Promise.race([exit, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    } finally {
      clearTimeout(timer);
      child.unref();
    }
  };
  return { child, exited: () => status, reaped };
}

/** Runs a command to completion; rejects with the tail of its output when it fails. */
export function runCommand(
  command: string,
  args: string[],
  opts: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv; notFound?: string; cwd?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.gid }),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' && opts.notFound ? new Error(opts.notFound) : error),
    );
    child.on('close', (code) =>
      code === 0
        ? resolve(output)
        : reject(
            new Error(`${command} ${args.join(' ')} failed (exit code ${code}):\n${lastLines(output, 30)}`),
          ),
    );
  });
}

export function lastLines(text: string, count: number): string {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

/** The last `count` lines of a file, or of those matching `only`; empty when none or no file. */
export function tailFile(path: string, count = 30, only?: RegExp): string {
  try {
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    return (only ? lines.filter((line) => only.test(line)) : lines).slice(-count).join('\n');
  } catch {
    return '';
  }
}
