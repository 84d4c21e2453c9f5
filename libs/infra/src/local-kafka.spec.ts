import { randomBytes } from 'node:crypto';
import { kafkaClusterId } from './local-kafka';

describe('kafkaClusterId', () => {
  it('never starts with "-" and is a 22-character base64url id, over many draws', () => {
    // An unfixed generator starts with '-' once in 64 draws: missing it 20,000 times has odds e^-312.
    const ids = Array.from({ length: 20_000 }, () => kafkaClusterId());
    const wrong = ids.filter(
      (id) => !/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/.test(id) || Buffer.from(id, 'base64url').length !== 16,
    );
    expect(wrong).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('draws again when the bytes encode to an id starting with "-"', () => {
    const dash = Buffer.alloc(16, 0xf8); // top six bits 62: base64url '-'
    const next = randomBytes(16);
    next[0] = 0; // 'A…'
    const draws = [dash, next];
    const random = jest.fn((size: number) => {
      expect(size).toBe(16);
      return draws.shift() ?? randomBytes(size);
    });
    expect(dash.toString('base64url')).toMatch(/^-/);
    expect(kafkaClusterId(random)).toBe(next.toString('base64url'));
    expect(random).toHaveBeenCalledTimes(2);
  });
});
