/** The history of runs as one SVG: a panel per target, a bar per run, the target as a dashed line. */
import { formatNumber } from './chart';

export interface HistoryPoint {
  readonly label: string;
  readonly value: number;
}

export interface HistoryPanel {
  readonly title: string;
  readonly unit: string;
  readonly target: number;
  /** true: the target is a floor (≥); false: a ceiling (≤). */
  readonly atLeast: boolean;
  readonly points: readonly HistoryPoint[];
}

const COLUMNS = 2;
const WIDTH = 520;
const HEIGHT = 230;
const HEADER = 56;
const MET = '#2f6db3';
const MISSED = '#e07b39';

const escape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A "nice" axis top at or above `value`. */
export function axisTop(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function panelSvg(panel: HistoryPanel, x0: number, y0: number): string {
  const left = x0 + 48;
  const right = x0 + WIDTH - 16;
  const top = y0 + 30;
  const bottom = y0 + HEIGHT - 34;
  const max = axisTop(Math.max(panel.target, ...panel.points.map((point) => point.value)) * 1.1);
  const y = (value: number): string => (bottom - (value / max) * (bottom - top)).toFixed(1);
  const parts = [
    `<text x="${x0 + 16}" y="${y0 + 18}" font-weight="bold">${escape(panel.title)}</text>`,
    `<text x="${left - 6}" y="${top + 4}" text-anchor="end" font-size="11" fill="#555">${formatNumber(max)}</text>`,
    `<text x="${left - 6}" y="${bottom + 4}" text-anchor="end" font-size="11" fill="#555">0</text>`,
  ];
  const step = (right - left) / Math.max(1, panel.points.length);
  panel.points.forEach((point, i) => {
    const met = panel.atLeast ? point.value >= panel.target : point.value <= panel.target;
    const tip = `${point.label}: ${formatNumber(point.value)} ${panel.unit}`;
    parts.push(
      `<rect x="${(left + i * step + step * 0.1).toFixed(1)}" y="${y(point.value)}" width="${(step * 0.8).toFixed(1)}" ` +
        `height="${(bottom - Number(y(point.value))).toFixed(1)}" fill="${met ? MET : MISSED}"><title>${escape(tip)}</title></rect>`,
    );
  });
  const first = panel.points[0]?.label ?? '';
  const last = panel.points[panel.points.length - 1]?.label ?? '';
  parts.push(
    `<line x1="${left}" x2="${right}" y1="${y(panel.target)}" y2="${y(panel.target)}" stroke="#333" stroke-dasharray="5 4"/>`,
    `<text x="${left - 6}" y="${Number(y(panel.target)) + 4}" text-anchor="end" font-size="11">${formatNumber(panel.target)}</text>`,
    `<line x1="${left}" x2="${right}" y1="${bottom}" y2="${bottom}" stroke="#333"/>`,
    `<text x="${left}" y="${bottom + 16}" font-size="11" fill="#555">${escape(first)}</text>`,
    `<text x="${right}" y="${bottom + 16}" text-anchor="end" font-size="11" fill="#555">${escape(last)}</text>`,
  );
  return parts.join('\n');
}

/** The panels as a standalone SVG document, two to a row. */
export function renderHistoryChart(title: string, panels: readonly HistoryPanel[]): string {
  const rows = Math.max(1, Math.ceil(panels.length / COLUMNS));
  const width = WIDTH * COLUMNS;
  const height = HEADER + rows * HEIGHT;
  const legend =
    `<rect x="16" y="34" width="12" height="12" fill="${MET}"/><text x="34" y="44" font-size="12">target met</text>` +
    `<rect x="130" y="34" width="12" height="12" fill="${MISSED}"/><text x="148" y="44" font-size="12">target missed</text>` +
    `<line x1="262" x2="290" y1="40" y2="40" stroke="#333" stroke-dasharray="5 4"/><text x="296" y="44" font-size="12">target</text>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="16" y="22" font-size="16" font-weight="bold">${escape(title)}</text>`,
    legend,
    ...panels.map((panel, i) =>
      panelSvg(panel, (i % COLUMNS) * WIDTH, HEADER + Math.floor(i / COLUMNS) * HEIGHT),
    ),
    '</svg>',
    '',
  ].join('\n');
}
