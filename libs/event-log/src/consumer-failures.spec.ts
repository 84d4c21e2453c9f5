import { ConsumerFailures } from './consumer-failures';

describe('ConsumerFailures', () => {
  const tracked = () => {
    const events: string[] = [];
    const failures = new ConsumerFailures({
      onError: (error) => events.push(`error: ${(error as Error).message}`),
      onRecovered: () => events.push('recovered'),
    });
    return { failures, events };
  };

  it('says nothing while nothing failed', () => {
    const { failures, events } = tracked();
    failures.restarted(['start 0']);
    failures.cleared('start 0');
    failures.cleared('batch 0');
    expect(events).toEqual([]);
  });

  it('recovers once every reported cause has cleared, and once only', () => {
    const { failures, events } = tracked();
    failures.failed('batch 0', new Error('a'));
    failures.failed('batch 1', new Error('b'));
    failures.cleared('batch 0');
    expect(events).toEqual(['error: a', 'error: b']);
    failures.cleared('batch 1');
    failures.cleared('batch 1');
    expect(events).toEqual(['error: a', 'error: b', 'recovered']);
  });

  it("after a restart, waits only for the new start's pending work", () => {
    const { failures, events } = tracked();
    failures.failed('log', new Error('broker gone'));
    failures.failed('batch 2', new Error('partition 2 is another member now'));
    failures.restarted(['start 0', 'start 1']);
    failures.cleared('start 0');
    expect(events).not.toContain('recovered');
    failures.cleared('start 1');
    expect(events).toEqual(['error: broker gone', 'error: partition 2 is another member now', 'recovered']);
  });

  it('recovers at a restart with nothing pending, as for a member given no partition', () => {
    const { failures, events } = tracked();
    failures.failed('log', new Error('broker gone'));
    failures.restarted();
    expect(events).toEqual(['error: broker gone', 'recovered']);
  });

  it('reports once that a failed cause answers again, and still waits for it to clear', () => {
    const { failures, events } = tracked();
    failures.answering('log', new Error('back'));
    failures.failed('log', new Error('broker gone'));
    failures.answering('log', new Error('back'));
    failures.answering('log', new Error('back'));
    failures.answering('batch 0', new Error('not failing'));
    expect(events).toEqual(['error: broker gone', 'error: back']);
    failures.failed('log', new Error('gone again'));
    failures.answering('log', new Error('back again'));
    failures.restarted();
    expect(events).toEqual([
      'error: broker gone',
      'error: back',
      'error: gone again',
      'error: back again',
      'recovered',
    ]);
  });
});
