import fc from 'fast-check';
import { Database } from './database';
import {
  bigints,
  booleans,
  inTransaction,
  ints,
  Param,
  parameters,
  poolOf,
  SqlArray,
  sqlLiteral,
  SqlValue,
  texts,
  uuids,
} from './sql';
import { openReadModelTestDatabase } from './testing/read-model-database';

describe('values of statements, as parameters and as literals, on PostgreSQL', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openReadModelTestDatabase('sql_literals', ['lit']);
  });
  afterAll(() => database?.close());

  const select = async (text: string, params: unknown[]) =>
    (await poolOf(database.dataSource).query(text, params)).rows[0].v as unknown;
  // A scalar's cast is the statement's; an array's comes with its placeholder or literal.
  const selectWith = (value: SqlValue, param: Param, params: unknown[], cast: string) =>
    select(`SELECT ${param(value)}${cast} AS v`, params);
  const asParameter = async (value: SqlValue, cast = '') => {
    const { param, params } = parameters();
    return selectWith(value, param, params, cast);
  };
  const asLiteral = (value: SqlValue, cast = '') => selectWith(value, sqlLiteral, [], cast);
  // The value as pg itself converts it, the reference both forms are held to.
  const asPgParameter = (value: unknown, cast: string) => select(`SELECT $1${cast} AS v`, [value]);
  const asPgArray = (array: SqlArray) => asPgParameter(array.values, `::${array.type}[]`);

  // Text without U+0000 (which PostgreSQL cannot store, as a parameter or as a literal).
  const text = fc.string({ unit: 'binary', maxLength: 24 }).filter((s) => !s.includes('\u0000'));
  const arrayOf = <T>(element: fc.Arbitrary<T>) =>
    fc.array(fc.option(element, { nil: null }), { maxLength: 6 });

  it('reads every text, alone or in an array with nulls, as the same parameter would', async () => {
    await fc.assert(
      fc.asyncProperty(text, arrayOf(text), async (one, many) => {
        const expected = await asPgArray(texts(many));
        expect(await asLiteral(one, '::text')).toEqual(await asPgParameter(one, '::text'));
        expect(await asLiteral(texts(many))).toEqual(expected);
        expect(await asParameter(texts(many))).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('reads the texts that mean something in an array literal or a quoted string as themselves', async () => {
    const awkward = [
      "'",
      "''",
      '\\',
      '\\\\',
      '"',
      '{',
      '}',
      ',',
      'NULL',
      'null',
      ' ',
      '',
      "E'x'",
      '$1',
      '\\"}',
      '😀',
      'é',
    ];
    expect(await asLiteral(texts(awkward))).toEqual(awkward);
    expect(await asParameter(texts(awkward))).toEqual(awkward);
    for (const value of awkward) expect(await asLiteral(value, '::text')).toBe(value);
  });

  it('reads arrays of every element type the projector writes, nulls and empty ones too, as pg would', async () => {
    const int = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    const bigint = fc.oneof(
      fc.maxSafeInteger(),
      fc.constantFrom(0, -1, 2 ** 32, -(2 ** 32), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
    );
    const uuid = fc.oneof(
      fc.uuid(),
      fc.uuid().map((u) => u.toUpperCase()),
    );
    const arrays: fc.Arbitrary<SqlArray>[] = [
      arrayOf(int).map(ints),
      arrayOf(bigint).map(bigints),
      arrayOf(fc.boolean()).map(booleans),
      arrayOf(uuid).map(uuids),
      arrayOf(text).map(texts),
    ];
    await fc.assert(
      fc.asyncProperty(fc.oneof(...arrays), async (array) => {
        const expected = await asPgArray(array);
        expect(await asParameter(array)).toEqual(expected);
        expect(await asLiteral(array)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses, before sending it, an element its type cannot hold', async () => {
    const refused: [SqlArray, RegExp][] = [
      [ints([2 ** 31]), /not an int/],
      [ints([1.5]), /not an int/],
      [bigints([2 ** 53]), /not a bigint/],
      [bigints([Number.NaN]), /not a bigint/],
      [uuids(['not-a-uuid']), /not a uuid/],
      [uuids(['0e8a9f0c-6f7e-4b52-8a4e-5f1f3c2b1a0g']), /not a uuid/],
      [uuids(['0e8a9f0c_6f7e-4b52-8a4e-5f1f3c2b1a00']), /not a uuid/],
    ];
    for (const [array, message] of refused) await expect(asParameter(array)).rejects.toThrow(message);
  });

  it('leaves text with U+0000 for PostgreSQL to refuse, as the same text parameter', async () => {
    const withNul = texts(['a\u0000b']);
    await expect(asParameter(withNul)).rejects.toThrow(/invalid byte sequence/);
    await expect(asPgArray(withNul)).rejects.toThrow(/invalid byte sequence/);
  });

  it('means the same with standard_conforming_strings off, where a backslash in a plain string escapes', async () => {
    const client = await poolOf(database.dataSource).connect();
    try {
      await client.query('SET standard_conforming_strings = off');
      const one = (await client.query(`SELECT ${sqlLiteral('a\\b')}::text AS v`)).rows[0].v;
      const many = (await client.query(`SELECT ${sqlLiteral(texts(['c\\', '"d\\"']))} AS v`)).rows[0].v;
      expect([one, many]).toEqual(['a\\b', ['c\\', '"d\\"']]);
    } finally {
      await client.query('RESET standard_conforming_strings');
      client.release();
    }
  });

  describe('inTransaction: the last statement sent with COMMIT', () => {
    beforeAll(() =>
      poolOf(database.dataSource).query('CREATE TABLE lit.committed (id int PRIMARY KEY, note text)'),
    );
    const rows = async () =>
      (await poolOf(database.dataSource).query('SELECT id, note FROM lit.committed ORDER BY id')).rows;

    it('commits what the transaction wrote when the statement succeeds, and answers its rows', async () => {
      const answered = await inTransaction(database.dataSource, async (sql) => {
        await sql.query('INSERT INTO lit.committed VALUES ($1, $2)', [1, 'before']);
        return sql.queryAndCommit(`INSERT INTO lit.committed VALUES (2, ${sqlLiteral("it's")}) RETURNING id`);
      });
      expect(answered).toEqual([{ id: 2 }]);
      expect(await rows()).toEqual([
        { id: 1, note: 'before' },
        { id: 2, note: "it's" },
      ]);
    });

    it('rolls everything back when the statement fails, and the connection serves again', async () => {
      await expect(
        inTransaction(database.dataSource, async (sql) => {
          await sql.query('INSERT INTO lit.committed VALUES (3, $1)', ['lost']);
          return sql.queryAndCommit('INSERT INTO lit.committed VALUES (1, NULL)');
        }),
      ).rejects.toThrow(/duplicate key/);
      expect((await rows()).map((row) => row.id)).toEqual([1, 2]);
      // Every client of the pool (a few) still opens and commits transactions.
      for (let i = 0; i < 8; i += 1) await inTransaction(database.dataSource, (sql) => sql.query('SELECT 1'));
    });

    it('refuses statements after the commit', async () => {
      await expect(
        inTransaction(database.dataSource, async (sql) => {
          await sql.queryAndCommit('SELECT 1');
          return sql.query('SELECT 2');
        }),
      ).rejects.toThrow('the transaction has ended');
    });
  });
});
