import { checkFeedUrl, isGuid, normalizeGuid } from '@castlog/domain';
import { UnstorablePart, unstorablePart } from '@castlog/event-log';
import { PROTO_KEY_REFUSED } from '@castlog/http';
import { z } from 'zod/v4';
import { ValidationFailed } from './errors';
import { checked, Message, openApiSchema, parseWith, says, sentence } from './schema';

// The parts request schemas are built of (see ./schema), and the rules every JSON body follows.

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Far deeper than any body castlog reads (3 levels), far below what JSON.stringify (a few thousand)
 * and PostgreSQL's jsonb handle. */
export const MAX_BODY_DEPTH = 32;

/** A request body must be a JSON object that the event log and the read model can store (see
 * `checkStorable`). Otherwise 405: such a value would make the append fail (503) or, once in the
 * log, stop the projection that cannot store its outcome. */
export function parseBodyObject(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw new ValidationFailed('the body must be a JSON object');
  checkStorable(body);
  return body;
}

/** A JSON object body (`parseBodyObject`) read by `schema`. */
export const parseBody = <S extends z.ZodType>(schema: S, body: unknown): z.output<S> =>
  parseWith(schema, parseBodyObject(body));

const UNSTORABLE_MESSAGES: Record<UnstorablePart, string> = {
  string: 'strings must not hold U+0000 or unpaired surrogates',
  key: 'keys must not hold U+0000 or unpaired surrogates',
  number: 'numbers must be finite (a number as large as 1e400 is not)',
  depth: `the body must not nest deeper than ${MAX_BODY_DEPTH} levels`,
  'refused key': PROTO_KEY_REFUSED,
};

/** A body's JSON value as the event log and the read model can store it: no string or key with
 * U+0000 or a lone surrogate (`\u0000`, `\ud800` in JSON), no number beyond a double's range, at most MAX_BODY_DEPTH levels deep, and
 * no `__proto__` key (Fastify's own JSON parsing refuses one; text bodies are parsed by castlog). */
export function checkStorable(body: unknown): void {
  const refused = unstorablePart(body, { depth: MAX_BODY_DEPTH, key: '__proto__' });
  if (refused !== undefined) throw new ValidationFailed(UNSTORABLE_MESSAGES[refused]);
}

/** A guid: a UUID in any case, read lower-case. */
export const guid = (name: Message) =>
  checked(
    (value) => (isGuid(value) ? normalizeGuid(value) : undefined),
    sentence(name, 'must be a UUID'),
  ).meta({
    type: 'string',
    format: 'uuid',
  });

/** An absolute http or https URL, read as the domain normalises it. */
export const feedUrl = (name: Message) =>
  checked(
    (value) => {
      const check = checkFeedUrl(value);
      return check.ok ? check.feedUrl : undefined;
    },
    sentence(name, 'must be an absolute http or https URL'),
  ).meta({ type: 'string', format: 'url' });

/** A query or path integer >= 1, however many digits it has: one past Number.MAX_SAFE_INTEGER is
 * read as MAX_SAFE_INTEGER, beyond every page and deletion id there is (an empty page, a 404). */
export const positiveInteger = (name: Message) =>
  checked(
    (value) =>
      typeof value === 'string' && /^\d+$/.test(value) && /[1-9]/.test(value)
        ? Math.min(Number(value), Number.MAX_SAFE_INTEGER)
        : undefined,
    sentence(name, 'must be an integer >= 1'),
  ).meta({ type: 'integer', minimum: 1 });

/** An RFC 3339 date-time (`readDateTime`), read as epoch milliseconds. */
export const dateTimeValue = (name: Message) =>
  checked(readDateTime, sentence(name, 'must be an RFC 3339 date-time'));

/** `dateTimeValue`, described as an RFC 3339 date-time. */
export const dateTime = (name: Message) =>
  dateTimeValue(name).meta({
    type: 'string',
    format: 'date-time',
  });

/** A query parameter given at most once (Fastify gives an array for a repeated one), read by `read`
 * when it is given, and described as `read` is. */
export const queryParameter = <T extends z.ZodType>(name: string, read: T) =>
  z
    .unknown()
    .refine((value) => value === undefined || typeof value === 'string', {
      ...says(`${name} must be given once`),
      abort: true,
    })
    .pipe(read.optional())
    .meta({ ...openApiSchema(read) });

/** The offset may come as ` hh:mm`: a `+` left unencoded in a query string reads as a space. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+ -]\d{2}:\d{2})?$/;

/** An RFC 3339 date-time, any offset, optional fraction; without an offset it is UTC. Answers
 * epoch milliseconds, a finer fraction rounded down (comparisons are strict, on milliseconds), or
 * undefined for anything else. Any year from 0000 on; a leap second (`:60`) is read as the second
 * after it. */
export function readDateTime(value: unknown): number | undefined {
  const match = typeof value === 'string' ? RFC3339.exec(value) : null;
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as number[];
  // setUTCFullYear, unlike Date.UTC, takes years 0–99 as they are.
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!);
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month! - 1 ||
    date.getUTCDate() !== day ||
    hour! > 23 ||
    minute! > 59 ||
    second! > 60
  ) {
    return undefined;
  }
  const millis = fraction ? Math.floor(Number(`0${fraction}`) * 1000) : 0;
  let offsetMinutes = 0;
  if (offset && offset.toUpperCase() !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const [oh, om] = offset.slice(1).split(':').map(Number) as [number, number];
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  return date.getTime() + ((hour! * 60 + minute! - offsetMinutes) * 60 + second!) * 1000 + millis;
}
