/** The element types of the arrays castlog's statements take, by their names in SQL. */
export type ElementType = 'text' | 'uuid' | 'bigint' | 'int' | 'boolean';

export type ElementOf<T extends ElementType> = T extends 'text' | 'uuid'
  ? string
  : T extends 'bigint' | 'int'
    ? number
    : boolean;

const HEADER = 20;
const NULL_LENGTH = -1;
const TWO_TO_32 = 2 ** 32;

const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i += 1) HEX_VALUE[0x30 + i] = i;
for (let i = 0; i < 6; i += 1) {
  HEX_VALUE[0x41 + i] = 10 + i;
  HEX_VALUE[0x61 + i] = 10 + i;
}
const hexDigit = (text: string, at: number): number => {
  const code = text.charCodeAt(at);
  return code < 128 ? (HEX_VALUE[code] as number) : -1;
};

/** How each element type goes in the binary format: its type oid, which the array names; its size
 * at most, after its 4-byte length (text: UTF-8 takes at most 3 bytes a UTF-16 unit, a lone
 * surrogate written as U+FFFD included; what is not text is refused when written); and how it is
 * written, answering its size in bytes. */
interface Element<T> {
  readonly oid: number;
  readonly maxSize: (value: T) => number;
  readonly write: (buffer: Buffer, at: number, value: T) => number;
}

const ELEMENTS: { readonly [T in ElementType]: Element<ElementOf<T>> } = {
  text: {
    oid: 25,
    maxSize: (value) => (typeof value === 'string' ? value.length * 3 : 0),
    write: (buffer, at, value) => {
      if (typeof value !== 'string') throw new Error(`not text: ${String(value)}`);
      return buffer.write(value, at);
    },
  },
  uuid: {
    oid: 2950,
    maxSize: () => 16,
    write: (buffer, at, value) => {
      if (typeof value !== 'string' || value.length !== 36) throw new Error(`not a uuid: ${String(value)}`);
      let to = at;
      for (let i = 0; i < 36; i += 2) {
        if (i === 8 || i === 13 || i === 18 || i === 23) {
          if (value.charCodeAt(i) !== 0x2d) throw new Error(`not a uuid: ${value}`);
          i += 1;
        }
        const high = hexDigit(value, i);
        const low = hexDigit(value, i + 1);
        if ((high | low) < 0) throw new Error(`not a uuid: ${value}`);
        buffer[to++] = (high << 4) | low;
      }
      return 16;
    },
  },
  bigint: {
    oid: 20,
    maxSize: () => 8,
    write: (buffer, at, value) => {
      if (!Number.isSafeInteger(value)) throw new Error(`not a bigint castlog writes: ${String(value)}`);
      const high = Math.floor(value / TWO_TO_32);
      buffer.writeInt32BE(high, at);
      buffer.writeUInt32BE(value - high * TWO_TO_32, at + 4);
      return 8;
    },
  },
  int: {
    oid: 23,
    maxSize: () => 4,
    write: (buffer, at, value) => {
      if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31)
        throw new Error(`not an int: ${String(value)}`);
      buffer.writeInt32BE(value, at);
      return 4;
    },
  },
  boolean: {
    oid: 16,
    maxSize: () => 1,
    write: (buffer, at, value) => {
      if (typeof value !== 'boolean') throw new Error(`not a boolean: ${String(value)}`);
      buffer[at] = value ? 1 : 0;
      return 1;
    },
  },
};

/** A one-dimensional array in PostgreSQL's binary format (what `array_recv` reads): the number of
 * dimensions, whether any element is null, the element type's oid, the length and lower bound,
 * then each element as its length (-1 for null) and its bytes. pg sends a Buffer parameter as
 * binary, so the server takes each element as it is instead of parsing the array's text, and
 * numbers and uuids cost Node less as bytes than as quoted text. Throws on an element its type
 * cannot hold. */
export function binaryArray<T extends ElementType>(
  type: T,
  values: readonly (ElementOf<T> | null)[],
): Buffer {
  const { oid, maxSize, write } = ELEMENTS[type] as Element<ElementOf<T>>;
  let size = HEADER;
  let hasNull = false;
  for (const value of values) {
    size += 4;
    if (value === null) hasNull = true;
    else size += maxSize(value);
  }
  const buffer = Buffer.allocUnsafe(size);
  buffer.writeInt32BE(1, 0);
  buffer.writeInt32BE(hasNull ? 1 : 0, 4);
  buffer.writeInt32BE(oid, 8);
  buffer.writeInt32BE(values.length, 12);
  buffer.writeInt32BE(1, 16);
  let at = HEADER;
  for (const value of values) {
    if (value === null) {
      buffer.writeInt32BE(NULL_LENGTH, at);
      at += 4;
    } else {
      const length = write(buffer, at + 4, value);
      buffer.writeInt32BE(length, at);
      at += 4 + length;
    }
  }
  return at === size ? buffer : buffer.subarray(0, at);
}
