import { dateTime, positiveInteger } from './parse';
import { parseWith } from './schema';

const parse = (value: unknown) => parseWith(dateTime('since'), value);
const parsePage = (value: unknown) => parseWith(positiveInteger('page'), value);

describe('dateTime', () => {
  it('reads any offset, with or without a fraction, and no offset as UTC', () => {
    const instant = Date.parse('2023-02-23T14:00:00.000Z');
    expect(parse('2023-02-23T14:00:00Z')).toBe(instant);
    expect(parse('2023-02-23t14:00:00z')).toBe(instant);
    expect(parse('2023-02-23T14:00:00')).toBe(instant);
    expect(parse('2023-02-23 14:00:00.000Z')).toBe(instant);
    expect(parse('2023-02-23T16:00:00+02:00')).toBe(instant);
    expect(parse('2023-02-23T09:30:00-04:30')).toBe(instant);
    expect(parse('2023-02-23T14:00:00-00:00')).toBe(instant);
    expect(parse('2023-02-23T14:00:00.1239Z')).toBe(instant + 123);
  });

  it('reads an offset whose + came unencoded in a query string, as a space', () => {
    expect(parse('2023-02-23T16:00:00 02:00')).toBe(Date.parse('2023-02-23T14:00:00Z'));
    expect(parse('2023-02-23 16:00:00.5 02:00')).toBe(Date.parse('2023-02-23T14:00:00.500Z'));
  });

  it('takes years before 100 as they are', () => {
    expect(parse('0001-01-01T00:00:00Z')).toBe(Date.parse('0001-01-01T00:00:00Z'));
    expect(parse('0000-03-01T00:00:00Z')).toBe(Date.parse('0000-03-01T00:00:00Z'));
    expect(parse('0099-12-31T23:59:59.999Z')).toBe(Date.parse('0099-12-31T23:59:59.999Z'));
  });

  it('reads a leap second as the second after it', () => {
    expect(parse('2016-12-31T23:59:60Z')).toBe(Date.parse('2017-01-01T00:00:00Z'));
    expect(parse('1990-12-31T15:59:60-08:00')).toBe(Date.parse('1991-01-01T00:00:00Z'));
  });

  it('refuses what is not a date-time', () => {
    for (const value of [
      'yesterday',
      '2024-13-01T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-04-31T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:60:00Z',
      '2024-01-01T00:00:61Z',
      '2024-01-01T00:00:00+24:00',
      '2024-01-01T00:00:00+02:60',
      '2024-01-01T00:00:00+0200',
      '2024-01-01',
      ' 2024-01-01T00:00:00Z',
    ])
      expect(() => parse(value)).toThrow('since must be an RFC 3339 date-time');
    expect(() => parse(20240101)).toThrow('since must be an RFC 3339 date-time');
  });
});

describe('positiveInteger', () => {
  it('reads an integer >= 1 of any length, past the largest safe integer as that integer', () => {
    expect(parsePage('1')).toBe(1);
    expect(parsePage('007')).toBe(7);
    expect(parsePage('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parsePage('99999999999999999999')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parsePage('9'.repeat(400))).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses what is not an integer >= 1', () => {
    for (const value of ['0', '000', '-1', '+1', '1.0', '1e3', ' 1', '', 'x', '0x10'])
      expect(() => parsePage(value)).toThrow('page must be an integer >= 1');
    expect(() => parsePage(3)).toThrow('page must be an integer >= 1');
  });
});
