import { parameters, sqlLiteral } from './sql';

describe('sqlLiteral: values for statements without parameters', () => {
  it('quotes text, doubling quotes, and reads backslashes as themselves', () => {
    expect(sqlLiteral('alice')).toBe("'alice'");
    expect(sqlLiteral("o'brien")).toBe("'o''brien'");
    expect(sqlLiteral('a\\b')).toBe(" E'a\\\\b'");
  });

  it('writes numbers and booleans as quoted text, as pg sends them, and null as NULL', () => {
    expect(sqlLiteral(42)).toBe("'42'");
    expect(sqlLiteral(true)).toBe("'true'");
    expect(sqlLiteral(null)).toBe('NULL');
  });

  it('refuses what PostgreSQL could not read back: a number that is not finite, text with U+0000', () => {
    expect(() => sqlLiteral(Number.NaN)).toThrow('not a finite number');
    expect(() => sqlLiteral([1, Number.POSITIVE_INFINITY])).toThrow('not a finite number');
    expect(() => sqlLiteral('a\u0000b')).toThrow('U+0000');
  });

  it('writes arrays as array literals, every element quoted and null as NULL', () => {
    expect(sqlLiteral([1, 2])).toBe(`'{"1","2"}'`);
    expect(sqlLiteral(["a'", null, false])).toBe(`'{"a''",NULL,"false"}'`);
    expect(sqlLiteral(['say "hi"', 'back\\slash'])).toBe(` E'{"say \\\\"hi\\\\"","back\\\\\\\\slash"}'`);
    expect(sqlLiteral([])).toBe("'{}'");
  });
});

describe('parameters: placeholders for a statement with parameters', () => {
  it('numbers the placeholders in the order the values come and keeps the values', () => {
    const { param, params } = parameters();
    expect(`${param('a')} ${param([1, null])}`).toBe('$1 $2');
    expect(params).toEqual(['a', '{"1",NULL}']);
  });

  it('sends an array as its literal, every element quoted and escaped, null as NULL', () => {
    const { param, params } = parameters();
    param(['a', 'say "hi"', 'back\\slash', '{,}', '', null, 42, true]);
    param([]);
    expect(params).toEqual(['{"a","say \\"hi\\"","back\\\\slash","{,}","",NULL,"42","true"}', '{}']);
  });
});
