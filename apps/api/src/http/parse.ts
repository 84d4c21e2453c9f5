import { checkFeedUrl, isGuid, normalizeGuid } from '@castlog/domain';
import { UnstorablePart, unstorablePart } from '@castlog/event-log';
import { PROTO_KEY_REFUSED } from '@castlog/http';
import { ValidationFailed } from './errors';

export const isObject = (value: unknown): value is Record<string, unknown> =>
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

export function parseGuid(value: unknown, name: string): string {
  if (!isGuid(value)) throw new ValidationFailed(`${name} must be a UUID`);
  return normalizeGuid(value);
}

/** A query or path integer >= 1, however many digits it has: one past Number.MAX_SAFE_INTEGER is
 * read as MAX_SAFE_INTEGER, beyond every page and deletion id there is (an empty page, a 404). */
export function parsePositiveInteger(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !/[1-9]/.test(value)) {
    throw new ValidationFailed(`${name} must be an integer >= 1`);
  }
  return Math.min(Number(value), Number.MAX_SAFE_INTEGER);
}

export function parseFeedUrl(value: unknown, name: string): string {
  const checked = checkFeedUrl(value);
  if (!checked.ok) throw new ValidationFailed(`${name} must be an absolute http or https URL`);
  return checked.feedUrl;
}

/** The offset may come as ` hh:mm`: a `+` left unencoded in a query string reads as a space. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+ -]\d{2}:\d{2})?$/;

/** An RFC 3339 date-time, any offset, optional fraction; without an offset it is UTC. Answers
 * epoch milliseconds, a finer fraction rounded down (comparisons are strict, on milliseconds). Any
 * year from 0000 on; a leap second (`:60`) is read as the second after it. */
export function parseDateTime(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const match = typeof value === 'string' ? RFC3339.exec(value) : null;
  const invalid = () => new ValidationFailed(`${name} must be an RFC 3339 date-time`);
  if (!match) throw invalid();
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
    throw invalid();
  }
  const millis = fraction ? Math.floor(Number(`0${fraction}`) * 1000) : 0;
  let offsetMinutes = 0;
  if (offset && offset.toUpperCase() !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const [oh, om] = offset.slice(1).split(':').map(Number) as [number, number];
    if (oh > 23 || om > 59) throw invalid();
    offsetMinutes = sign * (oh * 60 + om);
  }
  return date.getTime() + ((hour! * 60 + minute! - offsetMinutes) * 60 + second!) * 1000 + millis;
}
