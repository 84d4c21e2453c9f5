/** Small hand-rolled SVG bar charts: one panel per metric group, castlog beside its baseline. */

export interface ChartBar {
  readonly series: string;
  readonly value: number;
}

export interface ChartGroup {
  readonly label: string;
  readonly bars: readonly ChartBar[];
}

export interface ChartPanel {
  readonly title: string;
  readonly unit: string;
  readonly groups: readonly ChartGroup[];
}

export interface Chart {
  readonly title: string;
  readonly subtitle: string;
  readonly panels: readonly ChartPanel[];
}

const COLORS = ['#2f6db3', '#b0b7c3', '#e07b39', '#5a9e5a'];
const PANEL_WIDTH = 380;
const PANEL_HEIGHT = 270;
const TOP = 64;
const LEGEND = 30;

const escape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** 1234.5 → "1,235", 12.34 → "12.3", 0.1234 → "0.123". */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toPrecision(3).replace(/\.?0+$/, '');
}

/** A "nice" axis maximum at or above `value`: 1, 2, 2.5 or 5 × a power of ten. */
function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function panelSvg(panel: ChartPanel, x0: number, series: readonly string[]): string {
  const plotLeft = x0 + 56;
  const plotRight = x0 + PANEL_WIDTH - 16;
  const plotTop = TOP + 28;
  const plotBottom = TOP + PANEL_HEIGHT - 40;
  const max = niceMax(
    Math.max(...panel.groups.flatMap((g) => g.bars.map((b) => b.value)).filter(Number.isFinite), 0) * 1.1,
  );
  const y = (value: number) => plotBottom - (value / max) * (plotBottom - plotTop);
  const parts: string[] = [
    `<text x="${x0 + PANEL_WIDTH / 2}" y="${TOP + 12}" text-anchor="middle" font-weight="bold">${escape(panel.title)}</text>`,
    `<text x="${x0 + 8}" y="${plotTop - 10}" font-size="11" fill="#555">${escape(panel.unit)}</text>`,
  ];
  for (let i = 0; i <= 4; i += 1) {
    const value = (max * i) / 4;
    parts.push(
      `<line x1="${plotLeft}" x2="${plotRight}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}" stroke="#e3e3e3"/>`,
      `<text x="${plotLeft - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#555">${formatNumber(value)}</text>`,
    );
  }
  const groupWidth = (plotRight - plotLeft) / Math.max(1, panel.groups.length);
  panel.groups.forEach((group, g) => {
    const barWidth = Math.min(48, (groupWidth * 0.8) / Math.max(1, group.bars.length));
    const start = plotLeft + g * groupWidth + (groupWidth - barWidth * group.bars.length) / 2;
    group.bars.forEach((bar, b) => {
      const value = Number.isFinite(bar.value) ? bar.value : 0;
      const color = COLORS[Math.max(0, series.indexOf(bar.series)) % COLORS.length];
      const x = start + b * barWidth;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(value).toFixed(1)}" width="${(barWidth - 4).toFixed(1)}" height="${(plotBottom - y(value)).toFixed(1)}" fill="${color}"><title>${escape(`${bar.series}: ${formatNumber(bar.value)} ${panel.unit}`)}</title></rect>`,
        `<text x="${(x + (barWidth - 4) / 2).toFixed(1)}" y="${(y(value) - 4).toFixed(1)}" text-anchor="middle" font-size="10">${formatNumber(bar.value)}</text>`,
      );
    });
    parts.push(
      `<text x="${(plotLeft + g * groupWidth + groupWidth / 2).toFixed(1)}" y="${plotBottom + 16}" text-anchor="middle" font-size="12">${escape(group.label)}</text>`,
    );
  });
  parts.push(
    `<line x1="${plotLeft}" x2="${plotRight}" y1="${plotBottom}" y2="${plotBottom}" stroke="#333"/>`,
  );
  return parts.join('\n');
}

/** The chart as a standalone SVG document. */
export function renderChart(chart: Chart): string {
  const series = [
    ...new Set(chart.panels.flatMap((p) => p.groups.flatMap((g) => g.bars.map((b) => b.series)))),
  ];
  const width = PANEL_WIDTH * Math.max(1, chart.panels.length);
  const height = TOP + PANEL_HEIGHT + LEGEND;
  const legend = series
    .map((name, i) => {
      const x = 16 + i * 200;
      return (
        `<rect x="${x}" y="${height - 22}" width="12" height="12" fill="${COLORS[i % COLORS.length]}"/>` +
        `<text x="${x + 18}" y="${height - 12}" font-size="12">${escape(name)}</text>`
      );
    })
    .join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="bold">${escape(chart.title)}</text>`,
    `<text x="16" y="44" font-size="12" fill="#555">${escape(chart.subtitle)}</text>`,
    ...chart.panels.map((panel, i) => panelSvg(panel, i * PANEL_WIDTH, series)),
    legend,
    '</svg>',
    '',
  ].join('\n');
}
