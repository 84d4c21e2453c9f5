import { UPLOAD_BODY_LIMIT_BYTES } from '@castlog/config';
import { LogEvent } from '@castlog/domain';
import { encodeEnvelope, envelopeOf, MAX_MESSAGE_BYTES, MAX_UPLOAD_URLS } from '@castlog/event-log';
import { parseEpisodeActions, parseSimpleList, parseUpload } from './gpodder.request';

const USER = '00000000-0000-4000-8000-000000000001';

/** `count` texts made of `make(i, padding)`, padded so that they fill `bytes` together with
 * `overhead` bytes around them. */
function filling(
  bytes: number,
  count: number,
  overhead: number,
  make: (i: number, padding: string) => string,
) {
  const each = make(0, '').length;
  const padding = 'x'.repeat(Math.floor((bytes - overhead) / count) - each);
  return Array.from({ length: count }, (_, i) => make(i, padding.slice(String(i).length)));
}

/** The bytes the event takes in the log (its encoded value, its headers and its key). */
const logBytes = (event: LogEvent) => encodeEnvelope(envelopeOf(event, 'request-id')).bytes;

/** Each gpodder.net upload route reads up to UPLOAD_BODY_LIMIT_BYTES; the event that the largest
 * such body makes grows (a timestamp for each action without one, a candidate guid for each added
 * URL), and must still fit the event log's message limit. */
describe('the largest events of gpodder.net uploads', () => {
  it('fit the event log: 10,000 episode actions without timestamps in a body at the limit', () => {
    const actions = filling(UPLOAD_BODY_LIMIT_BYTES, MAX_UPLOAD_URLS, 2, (i, padding) =>
      JSON.stringify({
        podcast: 'https://a.example/rss',
        episode: `https://a.example/${i}${padding}`,
        action: 'new',
      }),
    );
    const body = `[${actions.join(',')}]`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(UPLOAD_BODY_LIMIT_BYTES);
    expect(Buffer.byteLength(body)).toBeGreaterThan(UPLOAD_BODY_LIMIT_BYTES - 2 * MAX_UPLOAD_URLS);
    const bytes = logBytes({
      type: 'EpisodeActionsUploaded',
      userId: USER,
      actions: parseEpisodeActions(body).actions,
    });
    expect(bytes).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
  });

  it('fit the event log: 10,000 added URLs in an upload or a simple-API PUT at the limit', () => {
    const urls = filling(
      UPLOAD_BODY_LIMIT_BYTES,
      MAX_UPLOAD_URLS,
      20,
      (i, padding) => `https://a.example/${i}${padding}`,
    );
    const upload = parseUpload(JSON.stringify({ add: urls, remove: [] }));
    const text = urls.map((url) => `${url}\n`).join('');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(UPLOAD_BODY_LIMIT_BYTES);
    const put = parseSimpleList('txt', text);
    for (const add of [upload.add, put])
      expect(
        logBytes({
          type: 'GpodderUploadRequested',
          userId: USER,
          deviceId: 'phone',
          add,
          remove: [],
        } as LogEvent),
      ).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
  });
});
