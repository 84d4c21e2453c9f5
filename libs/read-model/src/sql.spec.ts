import { sqlLiteral } from './sql';

describe('sqlLiteral: values for statements without parameters', () => {
  it('quotes text, doubling quotes, and reads backslashes as themselves', () => {
    expect(sqlLiteral('alice')).toBe("'alice'");
    expect(sqlLiteral("o'brien")).toBe("'o''brien'");
    expect(sqlLiteral('a\\b')).toBe(" E'a\\\\b'");
  });

  it('writes numbers as themselves and refuses what is not a finite number', () => {
    expect(sqlLiteral(42)).toBe('42');
    expect(() => sqlLiteral(Number.NaN)).toThrow('not a finite number');
  });

  it('writes arrays as ARRAY[…] of their elements', () => {
    expect(sqlLiteral([1, 2])).toBe('ARRAY[1,2]');
    expect(sqlLiteral(["a'", 'b'])).toBe("ARRAY['a''','b']");
    expect(sqlLiteral([])).toBe('ARRAY[]');
  });
});
