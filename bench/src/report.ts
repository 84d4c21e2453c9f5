import { Chart } from './chart';

/** One line of the summary table: a figure of castlog, the baseline's, their ratio and the target. */
export interface SummaryRow {
  readonly scenario: string;
  readonly metric: string;
  readonly unit: string;
  readonly measured: number;
  readonly baseline: number;
  readonly ratio: number;
  /** e.g. "≥ 0.5" or "≤ 4"; absent when only reported. */
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

const figure = (value: number): string =>
  !Number.isFinite(value)
    ? 'n/a'
    : Math.abs(value) >= 100
      ? Math.round(value).toLocaleString('en-US')
      : Number(value.toPrecision(3)).toString();

/** The summary as a Markdown table. */
export function markdownTable(rows: readonly SummaryRow[]): string {
  const lines = [
    '| scenario | metric | castlog | baseline | ratio | target | met |',
    '|---|---|---:|---:|---:|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.scenario} | ${row.metric} (${row.unit}) | ${figure(row.measured)} | ${figure(row.baseline)} | ` +
        `${figure(row.ratio)} | ${row.target ?? '—'} | ${row.met === undefined ? '—' : row.met ? 'yes' : '**no**'} |`,
    ),
  ];
  return lines.join('\n');
}
