import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as prettier from 'prettier';
import { figure } from './report';
import { HistoryPanel, HistoryPoint, renderHistoryChart } from './history-chart';
import { valueAt } from './targets';
import { inHistory } from './run-record';

/** One figure of the history: where it sits in a result, its bound, and how to read it. */
interface Metric {
  readonly id: string;
  readonly title: string;
  readonly column: string;
  readonly unit: string;
  readonly target: number;
  readonly targetText: string;
  readonly value: (result: Json) => number | undefined;
  /** The rounds' [min, max], for results that have rounds. */
  readonly range?: (result: Json) => [number, number] | undefined;
}

type Json = Record<string, unknown>;

const numberAt = (result: Json, path: string): number | undefined => {
  const value = valueAt(result, path);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};

/** The rounds' range: from a {median, min, max} figure, else from a list of the rounds' values
 * (`…_by_round`, which runs before the median-of-rounds method have for the write phases). */
const rangeAt =
  (path: string, byRound?: string) =>
  (result: Json): [number, number] | undefined => {
    const min = numberAt(result, `${path}.min`);
    const max = numberAt(result, `${path}.max`);
    if (min !== undefined && max !== undefined) return [min, max];
    const rounds = byRound ? valueAt(result, byRound) : undefined;
    if (!Array.isArray(rounds)) return undefined;
    const values = rounds.filter((value): value is number => typeof value === 'number');
    return values.length > 1 ? [Math.min(...values), Math.max(...values)] : undefined;
  };

/** The issue's targets, as figures over runs. */
export const METRICS: readonly Metric[] = [
  {
    id: 'write',
    title: 'single POST throughput, castlog / baseline',
    column: 'single POST',
    unit: 'ratio',
    target: 0.8,
    targetText: '≥ 0.8',
    value: (r) => numberAt(r, 'write.throughput_ratio_vs_baseline'),
    range: rangeAt('write.ratios.throughput', 'write.single.throughput_ratio_by_round'),
  },
  {
    id: 'write-p99',
    title: 'single POST p99, castlog / baseline',
    column: 'p99',
    unit: 'ratio',
    target: 2,
    targetText: '≤ 2',
    value: (r) => numberAt(r, 'write.p99_ratio_vs_baseline'),
    range: rangeAt('write.ratios.p99'),
  },
  {
    id: 'batch',
    title: 'batch-100 POST throughput (items/s), castlog / baseline',
    column: 'batch-100',
    unit: 'ratio',
    target: 0.4,
    targetText: '≥ 0.4',
    value: (r) => numberAt(r, 'write.batch_100_throughput_ratio_vs_baseline'),
    range: rangeAt('write.ratios.batch_100_throughput', 'write.batch_100.throughput_ratio_by_round'),
  },
  {
    id: 'catchup',
    title: 'catch-up, castlog / raw bulk upsert',
    column: 'catch-up',
    unit: 'ratio',
    target: 0.8,
    targetText: '≥ 0.8',
    value: (r) => numberAt(r, 'catchup.throughput_ratio_vs_baseline'),
    range: rangeAt('catchup.throughput_ratio'),
  },
  {
    id: 'listing',
    title: 'change listing p99, castlog / bare SQL',
    column: 'listing p99',
    unit: 'ratio',
    target: 1.5,
    targetText: '≤ 1.5',
    value: (r) => numberAt(r, 'listing.p99_ratio_vs_baseline'),
    range: rangeAt('listing.p99_ratio'),
  },
  {
    id: 'replay',
    title: 'replay + verify of 1,000,000 events, seconds',
    column: 'replay + verify (s)',
    unit: 's',
    target: 180,
    targetText: '≤ 180 s',
    value: (r) => {
      const replay = numberAt(r, 'replay.measured.replay_seconds');
      const verify = numberAt(r, 'replay.measured.verify_seconds');
      return numberAt(r, 'replay.settings.events') === 1_000_000 &&
        replay !== undefined &&
        verify !== undefined
        ? Number((replay + verify).toFixed(1))
        : undefined;
    },
  },
  {
    id: 'coldstart',
    title: 'embedded cold start to /health/ready, seconds',
    column: 'cold start (s)',
    unit: 's',
    target: 3,
    targetText: '≤ 3 s',
    value: (r) => numberAt(r, 'coldstart.seconds_to_ready.median'),
    range: rangeAt('coldstart.seconds_to_ready'),
  },
  {
    id: 'gpodder',
    title: 'gpodder.net syncs, Basic on every request / session cookie',
    column: 'gpodder Basic',
    unit: 'ratio',
    target: 0.8,
    targetText: '≥ 0.8',
    value: (r) => numberAt(r, 'gpodder.throughput_ratio_vs_baseline'),
    range: rangeAt('gpodder.throughput_ratio'),
  },
  {
    id: 'sync',
    title: 'sync draft POSTs of 30 actions (actions/s), over /v1 POSTs of 30 items (items/s)',
    column: 'sync POST',
    unit: 'ratio',
    target: 0.8,
    targetText: '≥ 0.8',
    value: (r) => numberAt(r, 'sync.throughput_ratio_vs_baseline'),
    range: rangeAt('sync.throughput.throughput_ratio'),
  },
  {
    id: 'sync-listing',
    title: 'sync draft listing p99, castlog / bare SQL',
    column: 'sync listing p99',
    unit: 'ratio',
    target: 1.5,
    targetText: '≤ 1.5',
    value: (r) => numberAt(r, 'sync.listing_p99_ratio_vs_baseline'),
    range: rangeAt('sync.listing.p99_ratio'),
  },
  {
    id: 'feeds',
    title: '10,000 feeds resolved from a local server, seconds',
    column: 'feeds (s)',
    unit: 's',
    target: 600,
    targetText: '≤ 600 s',
    value: (r) =>
      numberAt(r, 'feeds.settings.feeds') === 10_000 ? numberAt(r, 'feeds.resolve_seconds') : undefined,
  },
  {
    id: 'web',
    title: 'subscriptions page p50, web / GET /v1/subscriptions?per_page=5000',
    column: 'web page p50',
    unit: 'ratio',
    target: 1.5,
    targetText: '≤ 1.5',
    value: (r) =>
      numberAt(r, 'web.settings.subscriptions') === 5_000
        ? numberAt(r, 'web.p50_ratio_vs_baseline')
        : undefined,
    range: rangeAt('web.p50_ratio'),
  },
];

interface Run {
  readonly startedAt: string;
  readonly commit: string;
  readonly dirty?: boolean;
  readonly method: number;
  readonly command: string;
  /** Where it was read: a file of bench/results, or `<commit>:<path>` for an earlier version. */
  readonly from: string;
  readonly result: Json;
}

const git = (repoRoot: string, args: string[]): string =>
  execFileSync('git', args, {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'ignore'],
  });

const isRunFile = (path: string): boolean => /^bench\/results\/[^/]+\.json$/.test(path);

/** Every result JSON of bench/results (not quick/): the files as they are, and every earlier
 * version committed (some files were rewritten by later runs of the same day). */
function readRuns(repoRoot: string, resultsDir: string): Run[] {
  const texts: { from: string; text: string }[] = [];
  try {
    const commits = git(repoRoot, ['log', '--format=%H', '--', 'bench/results']).split('\n').filter(Boolean);
    for (const commit of commits) {
      const changed = git(repoRoot, [
        'diff-tree',
        '--no-commit-id',
        '--name-only',
        '-r',
        '--root',
        '--diff-filter=AM',
        commit,
        '--',
        'bench/results',
      ])
        .split('\n')
        .filter(isRunFile);
      for (const path of changed)
        texts.push({
          from: `${commit.slice(0, 7)}:${path}`,
          text: git(repoRoot, ['show', `${commit}:${path}`]),
        });
    }
  } catch {
    // not a git checkout: the files alone
  }
  if (existsSync(resultsDir)) {
    for (const name of readdirSync(resultsDir)
      .filter((file) => file.endsWith('.json'))
      .sort()) {
      const file = join(resultsDir, name);
      texts.push({ from: relative(repoRoot, file), text: readFileSync(file, 'utf8') });
    }
  }
  const runs = new Map<string, Run>();
  for (const { from, text } of texts) {
    let result: Json;
    try {
      result = JSON.parse(text) as Json;
    } catch {
      continue;
    }
    const startedAt = valueAt(result, 'started_at');
    if (typeof startedAt !== 'string' || !inHistory(result)) continue;
    const key = `${startedAt} ${String(result.command)}`;
    // The working file wins over its committed versions (read last), an earlier version over nothing.
    runs.set(key, {
      startedAt,
      commit: String(valueAt(result, 'source.commit_short') ?? result.commit ?? '?'),
      ...(typeof valueAt(result, 'source.dirty') === 'boolean'
        ? { dirty: valueAt(result, 'source.dirty') as boolean }
        : {}),
      method: typeof result.method === 'number' ? result.method : 1,
      command: String(result.command ?? ''),
      from: from.includes(':') ? (runs.get(key)?.from ?? from) : from,
      result,
    });
  }
  return [...runs.values()].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

const label = (run: Run): string =>
  `${run.startedAt.slice(5, 10)} ${run.startedAt.slice(11, 16)} ${run.commit}`;

const cell = (metric: Metric, run: Run): string => {
  const value = metric.value(run.result);
  if (value === undefined) return '—';
  const range = metric.range?.(run.result);
  const text =
    range && range[0] !== range[1]
      ? `${figure(value)} (${figure(range[0])}–${figure(range[1])})`
      : figure(value);
  const met = metric.targetText.startsWith('≥') ? value >= metric.target : value <= metric.target;
  return met ? text : `**${text}**`;
};

function panel(metric: Metric, runs: readonly Run[]): HistoryPanel | undefined {
  const points = runs
    .map((run) => ({ label: label(run), value: metric.value(run.result) }))
    .filter((point): point is HistoryPoint => point.value !== undefined);
  if (points.length === 0) return undefined;
  return {
    title: `${metric.title} (${metric.targetText})`,
    unit: metric.unit,
    target: metric.target,
    atLeast: metric.targetText.startsWith('≥'),
    points,
  };
}

export const HISTORY_START = '<!-- bench-history:start -->';
export const HISTORY_END = '<!-- bench-history:end -->';

const HISTORY_TABLE = 'history.md';
const HISTORY_CHART = 'history.svg';

/** Every run as a table (bench/results/history.md). */
export function renderHistoryTable(runs: readonly Run[]): string {
  const header = `| run (UTC) | commit | command | method | ${METRICS.map((metric) => `${metric.column} (${metric.targetText})`).join(' | ')} |`;
  return [
    '# History of runs',
    '',
    '_Written by `npm run bench -- --history` (and after every full run) from every `bench/results/*.json`, ' +
      'including the earlier versions of a file in git; short runs (`-short`, `--quick`) and runs with castlog ' +
      'settings of their own (`-set`) are left out. ' +
      'Each figure is the median of its rounds, with the lowest and highest round in brackets; a figure that misses ' +
      'its target is in bold. Method 1: runs before the median-of-rounds method (the write phases as one ratio of ' +
      'totals, over 3 alternating rounds from 2026-11-24 on and one measurement before; one measurement for the ' +
      'other scenarios; the catch-up baseline reading its input while timed)._',
    '',
    header,
    `|---|---|---|---:|${METRICS.map(() => '---:').join('|')}|`,
    ...runs.map(
      (run) =>
        `| ${run.startedAt.slice(0, 16).replace('T', ' ')} | \`${run.commit}\`${run.dirty ? ' (dirty)' : ''} | ` +
        `\`${run.command}\` | ${run.method} | ${METRICS.map((metric) => cell(metric, run)).join(' | ')} |`,
    ),
    '',
  ].join('\n');
}

/** The history section of docs/performance.md: the chart, and where the table is. */
export function renderHistory(runs: readonly Run[]): string {
  const last = runs[runs.length - 1];
  return [
    HISTORY_START,
    '',
    `_Written by \`npm run bench -- --history\` (and after every full run): ${runs.length} runs` +
      (last ? `, the last ${last.startedAt.slice(0, 16).replace('T', ' ')} UTC` : '') +
      `. Every figure of every run is in [bench/results/${HISTORY_TABLE}](../bench/results/${HISTORY_TABLE})._`,
    '',
    `![Each target's figure over the runs](../bench/results/${HISTORY_CHART})`,
    '',
    HISTORY_END,
  ].join('\n');
}

/** Rewrites the history section of docs/performance.md (between its markers; appended when they
 * are missing), formatted as `prettier --check` expects. Answers the number of runs. */
export async function writeHistory(
  repoRoot: string,
  resultsDir: string,
  log: (line: string) => void,
): Promise<number> {
  const runs = readRuns(repoRoot, resultsDir);
  const doc = join(repoRoot, 'docs', 'performance.md');
  const text = existsSync(doc) ? readFileSync(doc, 'utf8') : '# Performance\n';
  const section = renderHistory(runs);
  const panels = METRICS.map((metric) => panel(metric, runs)).filter(
    (drawn): drawn is HistoryPanel => drawn !== undefined,
  );
  writeFileSync(
    join(resultsDir, HISTORY_CHART),
    renderHistoryChart('castlog against its baselines, run by run', panels),
  );
  const table = join(resultsDir, HISTORY_TABLE);
  writeFileSync(table, await prettier.format(renderHistoryTable(runs), { filepath: table }));
  const start = text.indexOf(HISTORY_START);
  const end = text.indexOf(HISTORY_END);
  const next =
    start >= 0 && end > start
      ? `${text.slice(0, start)}${section}${text.slice(end + HISTORY_END.length)}`
      : `${text.trimEnd()}\n\n## History of runs\n\n${section}\n`;
  const options = (await prettier.resolveConfig(doc)) ?? {};
  writeFileSync(doc, await prettier.format(next, { ...options, filepath: doc }));
  for (const run of runs) log(`history: ${label(run)} from ${run.from}`);
  return runs.length;
}
