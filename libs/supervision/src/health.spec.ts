import { DependencyHealth } from './health';

describe('DependencyHealth', () => {
  it('reports one loss per outage and one restoration with its length', () => {
    const health = new DependencyHealth();
    const seen: string[] = [];
    health.observe({
      lost: (component) => seen.push(`lost ${component}`),
      restored: (component, outageMs) => seen.push(`restored ${component} ${outageMs >= 0}`),
    });
    health.lost('postgres', new Error('connect ECONNREFUSED'));
    health.lost('postgres', new Error('Connection terminated'));
    expect(health.isDown('postgres')).toBe(true);
    expect(health.current()).toEqual([
      { component: 'postgres', since: expect.any(Number), reason: 'Connection terminated' },
    ]);
    health.restored('postgres');
    health.restored('postgres');
    expect(seen).toEqual(['lost postgres', 'restored postgres true']);
    expect(health.current()).toEqual([]);
  });

  it('keeps components apart', () => {
    const health = new DependencyHealth();
    health.lost('event-log', 'broker gone');
    health.lost('postgres', new Error('down'));
    health.restored('event-log');
    expect(health.current().map((outage) => outage.component)).toEqual(['postgres']);
  });
});
