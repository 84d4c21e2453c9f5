import { ExpiringMap } from './expiring-map';

describe('ExpiringMap', () => {
  it('answers a value until its time, then forgets it', () => {
    const map = new ExpiringMap<string, number>(10);
    map.set('a', 1, 100);
    expect(map.get('a', 99)).toBe(1);
    expect(map.get('a', 100)).toBeUndefined();
    expect(map.size).toBe(0);
    expect(map.get('missing', 0)).toBeUndefined();
  });

  it('holds at most its bound, forgetting the entry set longest ago; setting again makes it newest', () => {
    const map = new ExpiringMap<string, number>(2);
    map.set('a', 1, 100);
    map.set('b', 2, 100);
    map.set('a', 3, 100);
    map.set('c', 4, 100);
    expect([map.get('a', 0), map.get('b', 0), map.get('c', 0)]).toEqual([3, undefined, 4]);
    expect(map.size).toBe(2);
  });

  it('forgets one key, the entries a test matches, or all', () => {
    const map = new ExpiringMap<string, number>(10);
    for (const [key, value] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      map.set(key, value, 100);
    map.delete('a');
    map.deleteWhere((value) => value === 2);
    expect([map.get('a', 0), map.get('b', 0), map.get('c', 0)]).toEqual([undefined, undefined, 3]);
    map.clear();
    expect(map.size).toBe(0);
  });
});
