/** Milliseconds since the epoch. Every instant the service assigns for one user is strictly
 * greater than the previous one it assigned for that user. */
export type Instant = number;

export const toIso = (instant: Instant): string => new Date(instant).toISOString();

/** The instant for a record appended at `recordTime`, raised to stay strictly monotonic per user. */
export const nextInstant = (recordTime: Instant, lastInstant: Instant): Instant =>
  Math.max(recordTime, lastInstant + 1);

/** Microseconds since the epoch: the sync draft's clocks (`occurred_at` keeps microseconds). */
export type Micros = number;

export const microsOf = (instant: Instant): Micros => instant * 1000;

/** UTC ISO 8601 with six fraction digits and `Z`: how the sync draft's face writes a `Micros`. */
export const toIsoMicros = (micros: Micros): string => {
  const millis = Math.floor(micros / 1000);
  const rest = micros - millis * 1000;
  return `${new Date(millis).toISOString().slice(0, -1)}${String(rest).padStart(3, '0')}Z`;
};

/** RFC 3339 `date-time`: a `T` (or `t`), any fraction, and an offset (`Z` or `±hh:mm`). */
const RFC_3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** The instant an RFC 3339 date-time with an offset names, in microseconds (more fraction digits
 * are cut), or `undefined` when `text` is not one. Decision: years before 1970 are refused, so
 * every `Micros` is a non-negative safe integer. A leap second (`:60`) is the next minute's start. */
export const parseRfc3339Micros = (text: unknown): Micros | undefined => {
  if (typeof text !== 'string') return undefined;
  const parts = RFC_3339.exec(text);
  if (parts === null) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number);
  const offsetHours = parts[10] === undefined ? 0 : Number(parts[10]);
  const offsetMinutes = parts[11] === undefined ? 0 : Number(parts[11]);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const sign = parts[9] === '-' ? -1 : 1;
  const millis =
    Date.UTC(year, month - 1, day, hour, minute, second) - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  const fraction = Number((parts[7] ?? '').slice(0, 6).padEnd(6, '0'));
  const micros = millis * 1000 + fraction;
  return micros >= 0 && Number.isSafeInteger(micros) ? micros : undefined;
};
