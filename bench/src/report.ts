import { Chart } from './chart';
import { Spread } from './stats';
import { TargetResult } from './targets';

/** One line of the summary table: a figure of castlog, the baseline's, their ratio and the target.
 * Where the scenario runs in rounds, each figure is the median of the rounds and `ratio_rounds`
 * gives the ratios' median, lowest and highest. */
export interface SummaryRow {
  readonly scenario: string;
  readonly metric: string;
  readonly unit: string;
  readonly measured: number;
  readonly baseline: number;
  readonly ratio: number;
  readonly ratio_rounds?: Spread;
  /** e.g. "≥ 0.8 of the baseline"; absent when only reported. */
  readonly target?: string;
  readonly met?: boolean;
}

/** What each scenario hands back: its JSON section, its table lines and its chart. */
export interface ScenarioOutcome {
  readonly name: string;
  readonly result: Record<string, unknown>;
  readonly rows: readonly SummaryRow[];
  readonly chart: Chart;
}

export const figure = (value: number): string =>
  !Number.isFinite(value)
    ? 'n/a'
    : Math.abs(value) >= 100
      ? Math.round(value).toLocaleString('en-US')
      : Number(value.toPrecision(3)).toString();

const ratioText = (row: SummaryRow): string =>
  row.ratio_rounds && row.ratio_rounds.min !== row.ratio_rounds.max
    ? `${figure(row.ratio)} (${figure(row.ratio_rounds.min)}–${figure(row.ratio_rounds.max)})`
    : figure(row.ratio);

/** The summary as a Markdown table. */
export function markdownTable(rows: readonly SummaryRow[]): string {
  const lines = [
    '| scenario | metric | castlog | baseline | ratio (rounds: min–max) | target | met |',
    '|---|---|---:|---:|---:|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.scenario} | ${row.metric} (${row.unit}) | ${figure(row.measured)} | ${figure(row.baseline)} | ` +
        `${ratioText(row)} | ${row.target ?? '—'} | ${row.met === undefined ? '—' : row.met ? 'yes' : '**no**'} |`,
    ),
  ];
  return lines.join('\n');
}

const roundsText = (target: TargetResult): string =>
  target.rounds && target.rounds.min !== target.rounds.max
    ? `${figure(target.rounds.min)}–${figure(target.rounds.max)}${target.every_round_met === false ? ' (not every round met it)' : ''}`
    : '—';

/** Every target of the issue with its status: met, missed or not measured. */
export function targetsTable(targets: readonly TargetResult[]): string {
  return [
    '| target | bound | figure | rounds | status |',
    '|---|---|---:|---|---|',
    ...targets.map(
      (target) =>
        `| ${target.what} | ${target.target} | ${target.figure === undefined ? '—' : `${figure(target.figure)}${target.unit === 's' ? ' s' : ''}`} | ` +
        `${roundsText(target)} | ${target.status === 'missed' ? '**missed**' : target.status}${target.note ? ` (${target.note})` : ''} |`,
    ),
  ].join('\n');
}
