import { Pacer } from './pacer';

/** A clock that moves only when told, and records every wait asked of it. */
function fakeClock() {
  let nowMs = 1_000;
  const waits: number[] = [];
  return {
    waits,
    advance: (ms: number) => (nowMs += ms),
    clock: { now: () => nowMs, wait: async (ms: number) => void waits.push(ms) },
  };
}

describe('Pacer', () => {
  it('gives starts asked for together slots 1000 / perSecond ms apart', async () => {
    const { waits, clock } = fakeClock();
    const pacer = new Pacer(20, clock);
    await Promise.all([pacer.next(), pacer.next(), pacer.next(), pacer.next()]);
    expect(waits).toEqual([50, 100, 150]);
  });

  it('starts at once when the next slot has passed, and saves no unused time for a burst', async () => {
    const { waits, advance, clock } = fakeClock();
    const pacer = new Pacer(10, clock);
    await pacer.next();
    advance(1_000);
    await pacer.next();
    await pacer.next();
    expect(waits).toEqual([100]);
    advance(30);
    await pacer.next();
    expect(waits).toEqual([100, 170]);
  });
});
