import { setTimeout as delay } from 'node:timers/promises';
import { timersLeftBy } from '../../../../test/support/timers';
import { heartbeatWhile } from './heartbeat-while';

describe('heartbeatWhile', () => {
  it('heartbeats while the work runs, until it is done', async () => {
    let beats = 0;
    let finish = () => {};
    const work = new Promise<void>((resolve) => (finish = resolve));
    await heartbeatWhile(
      work,
      async () => {
        beats += 1;
        if (beats === 3) finish();
      },
      5,
    );
    expect(beats).toBe(3);
  });

  it('leaves no timer running once the work is done, so a stopping process is not held', async () => {
    const left = await timersLeftBy(() => heartbeatWhile(delay(10), async () => undefined, 60_000));
    expect(left).toEqual({ value: undefined, pendingTimers: 0 });
  });

  it('fails as the work fails, leaving no timer either', async () => {
    const left = await timersLeftBy(() =>
      heartbeatWhile(Promise.reject(new Error('batch failed')), async () => undefined, 60_000),
    );
    expect(left.error?.message).toBe('batch failed');
    expect(left.pendingTimers).toBe(0);
  });
});
