/** Milliseconds since the epoch. Every instant the service assigns for one user is strictly
 * greater than the previous one it assigned for that user. */
export type Instant = number;

export const toIso = (instant: Instant): string => new Date(instant).toISOString();

/** The instant for a record appended at `recordTime`, raised to stay strictly monotonic per user. */
export const nextInstant = (recordTime: Instant, lastInstant: Instant): Instant =>
  Math.max(recordTime, lastInstant + 1);
