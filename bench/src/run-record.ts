import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

/** The source a run measured: the commit, and whether the working tree differed from it (the
 * bench runs what `npm run build` compiled from the tree, changes included). */
export interface SourceState {
  readonly commit?: string;
  readonly commit_short?: string;
  readonly commit_date?: string;
  /** True when `git status --porcelain` listed anything (changed, staged or untracked files). */
  readonly dirty?: boolean;
  /** `git status --porcelain` lines, the first 200. */
  readonly dirty_paths?: readonly string[];
}

const git = (repoRoot: string, args: string[]): string =>
  execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

export function sourceState(repoRoot: string): SourceState {
  try {
    const [commit, commitShort, commitDate] = git(repoRoot, ['log', '-1', '--format=%H%n%h%n%cI'])
      .trim()
      .split('\n');
    const status = git(repoRoot, ['status', '--porcelain'])
      .split('\n')
      .filter((line) => line.trim() !== '');
    return {
      commit,
      commit_short: commitShort,
      commit_date: commitDate,
      dirty: status.length > 0,
      dirty_paths: status.slice(0, 200),
    };
  } catch {
    return {};
  }
}

/** The 1, 5 and 15-minute load averages right now. */
export const loadAverage = (): { '1m': number; '5m': number; '15m': number } => {
  const [one = Number.NaN, five = Number.NaN, fifteen = Number.NaN] = loadavg();
  return { '1m': one, '5m': five, '15m': fifteen };
};

/** `2026-11-25T07-41-09Z`: the run's start, in UTC, usable in a file name. */
export const timestampOf = (date: Date): string =>
  date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');

/** Writes `content` to `dir/<stem><suffix>` without ever replacing a file: when the name is taken,
 * `<stem>-2<suffix>`, `-3`… Answers the path written. */
export function writeNewFile(dir: string, stem: string, suffix: string, content: string): string {
  for (let attempt = 1; ; attempt += 1) {
    const file = join(dir, `${stem}${attempt === 1 ? '' : `-${attempt}`}${suffix}`);
    let fd: number;
    try {
      fd = openSync(file, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    return file;
  }
}

/** The command a run was started with: `npm run bench -- <args>`, or, when node ran with flags of
 * its own (a profiler, V8 settings, NODE_OPTIONS), node's own command line, so that such a run says
 * so. */
export function commandOf(run: {
  readonly args: readonly string[];
  readonly execArgv: readonly string[];
  readonly nodeOptions?: string;
  readonly script: string;
}): string {
  const args = run.args.join(' ');
  const nodeOptions = run.nodeOptions?.trim();
  if (run.execArgv.length === 0 && !nodeOptions) return `npm run bench -- ${args}`.trim();
  return [nodeOptions ? `NODE_OPTIONS='${nodeOptions}'` : '', 'node', ...run.execArgv, run.script, args]
    .filter((part) => part !== '')
    .join(' ');
}

/** Whether a run's figures belong in the history: not a short run (`-short`, `--quick`), nor one
 * with castlog settings of its own (`--set`), which measured another configuration than castlog's
 * defaults. */
export const inHistory = (result: Record<string, unknown>): boolean =>
  result.quick !== true &&
  result.short_run !== true &&
  Object.keys((result.castlog_settings as Record<string, string> | undefined) ?? {}).length === 0;
