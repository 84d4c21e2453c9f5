import { bigints, booleans, ints, parameters, sqlLiteral, texts, uuids } from './sql';

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
    expect(() => sqlLiteral(bigints([1, Number.POSITIVE_INFINITY]))).toThrow('not a finite number');
    expect(() => sqlLiteral('a\u0000b')).toThrow('U+0000');
  });

  it('writes arrays as array literals cast to their type, every element quoted and null as NULL', () => {
    expect(sqlLiteral(ints([1, 2]))).toBe(`'{"1","2"}'::int[]`);
    expect(sqlLiteral(texts(["a'", null]))).toBe(`'{"a''",NULL}'::text[]`);
    expect(sqlLiteral(booleans([false]))).toBe(`'{"false"}'::boolean[]`);
    expect(sqlLiteral(texts(['say "hi"', 'back\\slash']))).toBe(
      ` E'{"say \\\\"hi\\\\"","back\\\\\\\\slash"}'::text[]`,
    );
    expect(sqlLiteral(uuids([]))).toBe("'{}'::uuid[]");
  });
});

describe('parameters: placeholders for a statement with parameters', () => {
  it('numbers the placeholders in the order the values come, an array cast to its type', () => {
    const { param, params } = parameters();
    expect(`${param('a')} ${param(bigints([1, null]))} ${param(7)}`).toBe('$1 $2::bigint[] $3');
    expect(params[0]).toBe('a');
    expect(params[2]).toBe(7);
  });

  it("sends an array in PostgreSQL's binary array format", () => {
    const { param, params } = parameters();
    param(ints([5]));
    expect(params[0]).toEqual(
      Buffer.from([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 5]),
    );
  });
});
