import { binaryArray } from './binary-array';

/** The header array_send writes for one dimension: dimensions, has-null flag, element oid,
 * length, lower bound. */
const header = (hasNull: 0 | 1, oid: number, length: number) =>
  [1, hasNull, oid, length, 1].flatMap((n) => [...int32(n)]);
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const bytes = (...parts: (number[] | Buffer)[]) => Buffer.concat(parts.map((p) => Buffer.from(p)));

describe("binaryArray: an array in PostgreSQL's binary format", () => {
  it('writes text as UTF-8 with its length in bytes, and null as length -1', () => {
    expect(binaryArray('text', ['é', null, ''])).toEqual(
      bytes(header(1, 25, 3), int32(2), [0xc3, 0xa9], int32(-1), int32(0)),
    );
  });

  it('writes a uuid as its 16 bytes, in either case', () => {
    const bytesOf = [...Buffer.from('0e8a9f0c6f7e4b528a4e5f1f3c2b1aff', 'hex')];
    expect(
      binaryArray('uuid', ['0e8a9f0c-6f7e-4b52-8a4e-5f1f3c2b1aff', '0E8A9F0C-6F7E-4B52-8A4E-5F1F3C2B1AFF']),
    ).toEqual(bytes(header(0, 2950, 2), int32(16), bytesOf, int32(16), bytesOf));
  });

  it("writes a bigint as 8 bytes in two's complement, to the largest safe integers", () => {
    const eight = (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(n);
      return b;
    };
    const values = [0, -1, 2 ** 32, -(2 ** 32) - 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    expect(binaryArray('bigint', values)).toEqual(
      bytes(header(0, 20, values.length), ...values.flatMap((v) => [int32(8), eight(BigInt(v))])),
    );
  });

  it('writes ints as 4 bytes and booleans as 1', () => {
    expect(binaryArray('int', [-(2 ** 31), 2 ** 31 - 1])).toEqual(
      bytes(header(0, 23, 2), int32(4), int32(-(2 ** 31)), int32(4), int32(2 ** 31 - 1)),
    );
    expect(binaryArray('boolean', [true, false])).toEqual(
      bytes(header(0, 16, 2), int32(1), [1], int32(1), [0]),
    );
  });

  it('writes an empty array as one dimension of length 0', () => {
    expect(binaryArray('uuid', [])).toEqual(bytes(header(0, 2950, 0)));
  });

  it('refuses an element its type cannot hold', () => {
    expect(() => binaryArray('int', [2 ** 31])).toThrow('not an int');
    expect(() => binaryArray('bigint', [2 ** 53])).toThrow('not a bigint');
    expect(() => binaryArray('uuid', ['0e8a9f0c-6f7e-4b52-8a4e-5f1f3c2b1af'])).toThrow('not a uuid');
    expect(() => binaryArray('uuid', ['0e8a9f0c+6f7e-4b52-8a4e-5f1f3c2b1aff'])).toThrow('not a uuid');
    expect(() => binaryArray('uuid', ['0e8a9f0c-6f7e-4b52-8a4e-5f1f3c2b1afé'])).toThrow('not a uuid');
    expect(() => binaryArray('text', [3 as unknown as string])).toThrow('not text');
    expect(() => binaryArray('boolean', ['true' as unknown as boolean])).toThrow('not a boolean');
  });
});
