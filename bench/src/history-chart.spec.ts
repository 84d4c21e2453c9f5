import { renderHistoryChart } from './history-chart';

describe('renderHistoryChart', () => {
  const panel = (atLeast: boolean) => ({
    title: atLeast ? 'throughput (≥ 0.8)' : 'p99 (≤ 2)',
    unit: 'ratio',
    target: atLeast ? 0.8 : 2,
    atLeast,
    points: [
      { label: 'run a', value: 0.7 },
      { label: 'run b', value: 2.5 },
    ],
  });

  it('draws a bar per run, coloured by whether it met its target, and the target line', () => {
    const svg = renderHistoryChart('history', [panel(true), panel(false)]);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<title>/g)).toHaveLength(4);
    const fills = [...svg.matchAll(/fill="(#[0-9a-f]{6})"><title>/g)].map((match) => match[1]);
    // ≥ 0.8: 0.7 missed, 2.5 met; ≤ 2: 0.7 met, 2.5 missed.
    expect(fills).toEqual(['#e07b39', '#2f6db3', '#2f6db3', '#e07b39']);
    expect(svg.match(/stroke-dasharray/g)).toHaveLength(3);
    expect(svg).toContain('throughput (≥ 0.8)');
  });
});
