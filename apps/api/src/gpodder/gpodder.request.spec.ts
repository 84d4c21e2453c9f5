import { MAX_UPLOAD_URLS } from '@castlog/event-log';
import {
  parseEpisodeActions,
  parseEpisodeActionsQuery,
  parseSyncRequest,
  parseUpload,
} from './gpodder.request';

// Requests with more than one fault: the message names the one the checks meet first.

describe('the gpodder.net requests', () => {
  it('check both lists of an upload for their type before either for its length', () => {
    const tooMany = Array.from({ length: MAX_UPLOAD_URLS + 1 }, (_, i) => `https://example.com/${i}`);
    expect(() => parseUpload(JSON.stringify({ add: tooMany, remove: 'x' }))).toThrow(
      'remove must be an array of URLs',
    );
    expect(() => parseUpload(JSON.stringify({ add: tooMany, remove: tooMany }))).toThrow(
      `add must hold at most ${MAX_UPLOAD_URLS} URLs`,
    );
  });

  it('check the shape of synchronize before its device ids', () => {
    expect(() => parseSyncRequest(JSON.stringify({ synchronize: [['bad id'], 5] }))).toThrow(
      'synchronize must be a list of lists of device ids',
    );
    expect(() => parseSyncRequest(JSON.stringify({ synchronize: [['a', 'bad id']] }))).toThrow(
      'synchronize must be 1 to 64 of A-Z a-z 0-9 . _ -',
    );
  });

  it('check the number of episode actions before any action, then each in order, play fields last', () => {
    const play = { podcast: 'p', episode: 'e', action: 'PLAY', position: -1 };
    expect(() => parseEpisodeActions(JSON.stringify(Array(MAX_UPLOAD_URLS + 1).fill(3)))).toThrow(
      `the body must hold at most ${MAX_UPLOAD_URLS} episode actions`,
    );
    expect(() => parseEpisodeActions(JSON.stringify([play, { ...play, podcast: '' }]))).toThrow(
      'actions[0].position must be an integer from 0 to 2147483647 (seconds)',
    );
    expect(() => parseEpisodeActions(JSON.stringify([{ ...play, device: 'a b' }]))).toThrow(
      'actions[0].device must be 1 to 64 of A-Z a-z 0-9 . _ -',
    );
    expect(() =>
      parseEpisodeActions(JSON.stringify([{ ...play, timestamp: '10000-01-01T00:00:00Z' }])),
    ).toThrow('actions[0].timestamp must be an RFC 3339 date-time');
    expect(parseEpisodeActions(JSON.stringify([{ ...play, action: 'New', position: -1 }]))).toEqual([
      { podcast: 'p', episode: 'e', action: 'new' },
    ]);
  });

  it('read the episode actions query', () => {
    expect(parseEpisodeActionsQuery({ since: '0', aggregated: 'TRUE', device: 'phone' })).toEqual({
      since: null,
      device: 'phone',
      aggregated: true,
    });
    expect(() => parseEpisodeActionsQuery({ since: ['1', '2'] })).toThrow('since must be given once');
  });
});
