import { randomUUID } from 'node:crypto';

/** UTC ISO 8601 with milliseconds and Z, as every timestamp the service emits. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const errorBody = (code: number, message?: string) => ({
  code: String(code),
  message: message ?? expect.any(String),
});

export const VALIDATION = (detail?: string | RegExp) =>
  expect.objectContaining({
    code: '405',
    message:
      detail === undefined
        ? expect.stringMatching(/^Input could not be validated/)
        : typeof detail === 'string'
          ? `Input could not be validated: ${detail}`
          : expect.stringMatching(detail),
  });

/** A feed URL no other test uses. */
export const feed = (label = 'feed'): string => `https://${label}.example.com/${randomUUID()}/rss`;
export const guid = (): string => randomUUID();
