import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** The environment of a child castlog: the test's own, minus the infrastructure variables that the
 * child must not inherit unless given. */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.DATABASE_URL;
  delete base.KAFKA_BROKERS;
  return { ...base, ...env };
}

export interface RunningChild {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves when the output matches, rejects when the process exits first or at the deadline. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** `work`, whose failure also carries the last lines this process printed: a wait on what the
   * process should bring about says, when it times out, what the process was doing meanwhile. */
  explaining<T>(work: Promise<T>): Promise<T>;
}

/** The lines of a child's output a failure quotes. */
const QUOTED_LINES = 80;

const lastLines = (text: string): string => {
  const lines = text.trimEnd().split('\n');
  const shown = lines.slice(-QUOTED_LINES).join('\n');
  return lines.length > QUOTED_LINES
    ? `(${lines.length - QUOTED_LINES} earlier lines left out)\n${shown}`
    : shown;
};

/** Starts a built entry point (`dist/apps/<app>/src/main.js`) as a child process. */
export function startChild(app: string, env: NodeJS.ProcessEnv): RunningChild {
  return startBuilt(`dist/apps/${app}/src/main.js`, env, app);
}

/** Starts a built script (a path under dist/, such as a test's own entry point that
 * tsconfig.build.json builds) as a child process; `app` names it in messages. */
export function startBuilt(script: string, env: NodeJS.ProcessEnv, app: string): RunningChild {
  const child = spawn(process.execPath, [resolve(ROOT, script)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    // 'close', not 'exit': it comes once the output is read to its end, so what the process printed
    // last (a refusal, a shutdown line) is in `output()` when `exited` answers.
    child.once('close', (code, signal) => resolveExit({ code, signal })),
  );
  return {
    child,
    output: () => text,
    waitForOutput(pattern, timeoutMs = 60_000) {
      return new Promise((resolveMatch, reject) => {
        const check = () => {
          const match = pattern.exec(text);
          if (match) {
            done();
            resolveMatch(match);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${pattern} in output of ${app}:\n${text}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exit.then(({ code, signal }) => {
          if (!pattern.test(text)) {
            done();
            reject(new Error(`${app} exited (code ${code}, signal ${signal}) before ${pattern}:\n${text}`));
          }
        });
        check();
      });
    },
    explaining(work) {
      return work.catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        throw new Error(`${message}\n--- the last output of ${app} ---\n${lastLines(text)}`);
      });
    },
    exited(timeoutMs = 30_000) {
      return Promise.race([
        exit,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`${app} did not exit within ${timeoutMs} ms:\n${text}`)),
            timeoutMs,
          ).unref(),
        ),
      ]);
    },
  };
}

/** Runs the built CLI to completion. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [resolve(ROOT, 'dist/apps/cli/src/main.js'), ...args], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolveRun({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}
