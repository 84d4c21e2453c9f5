import { randomUUID } from 'node:crypto';

/** UTC ISO 8601 with milliseconds and Z, as every timestamp the service emits. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const errorBody = (code: number, message?: string) => ({
  code: String(code),
  message: message ?? expect.any(String),
});

/** The error body of input that fails validation: 405 on /v1 (the Open Podcast API's status),
 * 400 on the gpodder.net routes (`GPODDER_INVALID`). */
const invalidInput = (code: '400' | '405', detail?: string | RegExp) =>
  expect.objectContaining({
    code,
    message:
      detail === undefined
        ? expect.stringMatching(/^Input could not be validated/)
        : typeof detail === 'string'
          ? `Input could not be validated: ${detail}`
          : expect.stringMatching(detail),
  });

export const VALIDATION = (detail?: string | RegExp) => invalidInput('405', detail);

/** castlog's error body with gpodder.net's 400. */
export const GPODDER_INVALID = (detail?: string | RegExp) => invalidInput('400', detail);

/** A feed URL no other test uses. */
export const feed = (label = 'feed'): string => `https://${label}.example.com/${randomUUID()}/rss`;
export const guid = (): string => randomUUID();
