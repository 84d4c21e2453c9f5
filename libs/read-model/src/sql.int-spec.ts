import fc from 'fast-check';
import { Database } from './database';
import { inTransaction, parameters, poolOf, sqlLiteral, SqlValue } from './sql';
import { openReadModelTestDatabase } from './testing/read-model-database';

const TYPES = ['text', 'bigint', 'boolean', 'uuid', 'jsonb'] as const;

describe('statements without parameters, on PostgreSQL', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openReadModelTestDatabase('sql_literals', ['lit']);
  });
  afterAll(() => database?.close());

  const select = async (
    value: SqlValue,
    type: string,
    param: (value: SqlValue) => string,
    params: SqlValue[],
  ) =>
    (await poolOf(database.dataSource).query(`SELECT ${param(value)}::${type} AS v`, params)).rows[0]
      .v as unknown;
  const asParameter = (value: SqlValue, type: string) => {
    const { param, params } = parameters();
    return select(value, type, param, params);
  };
  const asLiteral = (value: SqlValue, type: string) => select(value, type, sqlLiteral, []);
  // The value as pg itself converts it, the reference both forms are held to.
  const asPgParameter = (value: SqlValue, type: string) => select(value, type, () => '$1', [value]);

  // Text without U+0000 (which PostgreSQL cannot store, as a parameter or as a literal).
  const text = fc.string({ unit: 'binary', maxLength: 24 }).filter((s) => !s.includes('\u0000'));

  it('reads every text, alone or in an array with nulls, as the same parameter would', async () => {
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.array(fc.option(text, { nil: null }), { maxLength: 6 }),
        async (one, many) => {
          const expected = await asPgParameter(many, 'text[]');
          expect(await asLiteral(one, 'text')).toEqual(await asPgParameter(one, 'text'));
          expect(await asLiteral(many, 'text[]')).toEqual(expected);
          expect(await asParameter(many, 'text[]')).toEqual(expected);
        },
      ),
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
    ];
    expect(await asLiteral(awkward, 'text[]')).toEqual(awkward);
    expect(await asParameter(awkward, 'text[]')).toEqual(awkward);
    for (const value of awkward) expect(await asLiteral(value, 'text')).toBe(value);
  });

  it('reads numbers, booleans, uuids and JSON in the casts the projector uses as parameters do', async () => {
    const values: Record<(typeof TYPES)[number], SqlValue> = {
      text: ['a', null],
      bigint: [0, -1, Number.MAX_SAFE_INTEGER, null],
      boolean: [true, false, null],
      uuid: ['0e8a9f0c-6f7e-4b52-8a4e-5f1f3c2b1a00', null],
      jsonb: [JSON.stringify({ kind: "it's", path: 'C:\\feeds', quote: '"' }), null],
    };
    for (const type of TYPES) {
      const expected = await asPgParameter(values[type], `${type}[]`);
      expect(await asLiteral(values[type], `${type}[]`)).toEqual(expected);
      expect(await asParameter(values[type], `${type}[]`)).toEqual(expected);
    }
  });

  it('means the same with standard_conforming_strings off, where a backslash in a plain string escapes', async () => {
    const client = await poolOf(database.dataSource).connect();
    try {
      await client.query('SET standard_conforming_strings = off');
      const one = (await client.query(`SELECT ${sqlLiteral('a\\b')}::text AS v`)).rows[0].v;
      const many = (await client.query(`SELECT ${sqlLiteral(['c\\', '"d\\"'])}::text[] AS v`)).rows[0].v;
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
