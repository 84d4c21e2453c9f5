import { Closers } from './closers';

describe('Closers: what an opener opened, closed in one place', () => {
  it('closes newest first, what it was given last, once however often it is asked', async () => {
    const closed: string[] = [];
    const closers = new Closers(() => undefined);
    closers.add('a', () => void closed.push('a'));
    closers.last(() => void closed.push('given'));
    closers.add('b', () => void closed.push('b'));
    await Promise.all([closers.close(), closers.close()]);
    await closers.close();
    expect(closed).toEqual(['b', 'a', 'given']);
  });

  it('logs a failure to close one and still closes the rest', async () => {
    const logged: string[] = [];
    const closed: string[] = [];
    const closers = new Closers((_level, line) => void logged.push(line));
    closers.add('a', () => void closed.push('a'));
    closers.add('b', () => Promise.reject(new Error('gone')));
    await closers.close();
    expect(closed).toEqual(['a']);
    expect(logged).toEqual(['while closing: Error: gone']);
  });

  it('closes what was opened when opening fails, and rethrows', async () => {
    const closed: string[] = [];
    const closers = new Closers(() => undefined);
    const failure = await closers
      .opening(async () => {
        closers.add('a', () => void closed.push('a'));
        throw new Error('refused');
      })
      .catch((error: unknown) => error);
    expect(failure).toEqual(new Error('refused'));
    expect(closed).toEqual(['a']);
  });
});
