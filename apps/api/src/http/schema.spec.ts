import { z } from 'zod/v4';
import { positiveInteger, queryParameter } from './parse';
import { at, boundedList, checked, openApiSchema, parseWith, says, sentence } from './schema';

const refusal = (schema: z.ZodType, value: unknown): string => {
  try {
    parseWith(schema, value);
  } catch (error) {
    return (error as Error).message.replace(/^Input could not be validated: /, '');
  }
  throw new Error('accepted');
};

describe('parseWith', () => {
  const item = z.object(
    {
      name: z.string(says(sentence(at, 'must be a string'))),
      count: checked(
        (value) => (value === 1 ? 1 : undefined),
        sentence((path) => at(['items', ...path]), 'must be 1'),
      ),
    },
    says(sentence(at, 'must be an object')),
  );

  it('answers the first issue in the order of the fields and items, naming where it is', () => {
    expect(refusal(z.array(item), [{ name: 'a', count: 1 }, { count: 2 }])).toBe('[1].name must be a string');
    expect(refusal(z.array(item), [{ name: 'a', count: 2 }, 3])).toBe('items[0].count must be 1');
    expect(refusal(z.object({ list: z.array(item) }), { list: [4] })).toBe('list[0] must be an object');
    expect(parseWith(z.array(item), [{ name: 'a', count: 1 }])).toEqual([{ name: 'a', count: 1 }]);
  });

  it('judges a bounded list by its length before its items', () => {
    const list = boundedList(item, { min: 1, max: 2 }, { type: 'not a list', min: 'empty', max: 'too long' });
    expect(refusal(list, {})).toBe('not a list');
    expect(refusal(list, [])).toBe('empty');
    expect(refusal(list, [1, 2, 3])).toBe('too long');
    expect(refusal(list, [1, 2])).toBe('[0] must be an object');
  });

  it('reads a query parameter given once, and refuses one given twice before reading it', () => {
    const page = queryParameter('page', positiveInteger('page'));
    expect(parseWith(page, undefined)).toBeUndefined();
    expect(parseWith(page, '3')).toBe(3);
    expect(refusal(page, ['x', '3'])).toBe('page must be given once');
    expect(refusal(page, 'x')).toBe('page must be an integer >= 1');
  });
});

describe('openApiSchema', () => {
  it('describes a bounded list with its items, and a default of a value read by a function', () => {
    const list = boundedList(z.string(), { max: 3 }, { type: 'a list', max: 'too long' });
    expect(openApiSchema(list)).toEqual({ type: 'array', maxItems: 3, items: { type: 'string' } });
    expect(openApiSchema(queryParameter('page', positiveInteger('page')).default(1))).toEqual({
      type: 'integer',
      minimum: 1,
      default: 1,
    });
  });
});
