import { MAX_UPLOAD_URLS } from '@castlog/event-log';
import {
  parseEpisodeActions,
  parseEpisodeActionsQuery,
  parseSettingsScope,
  parseSettingsUpdate,
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

  it('read the settings scopes from their queries, each needing its parameters, once each', () => {
    expect(parseSettingsScope('account', { device: 'ignored' })).toEqual({ kind: 'account' });
    expect(parseSettingsScope('device', { device: 'phone', podcast: 'x' })).toEqual({
      kind: 'device',
      deviceId: 'phone',
    });
    expect(parseSettingsScope('episode', { podcast: ' p ', episode: 'e' })).toEqual({
      kind: 'episode',
      podcast: ' p ',
      episode: 'e',
    });
    expect(() => parseSettingsScope('device', {})).toThrow('the device scope needs the device parameter');
    expect(() => parseSettingsScope('device', { device: 'a b' })).toThrow(
      'device must be 1 to 64 of A-Z a-z 0-9 . _ -',
    );
    expect(() => parseSettingsScope('episode', { podcast: 'p' })).toThrow(
      'the episode scope needs the episode parameter',
    );
    expect(() => parseSettingsScope('episode', { episode: 'e' })).toThrow(
      'the episode scope needs the podcast parameter',
    );
    expect(() => parseSettingsScope('podcast', { podcast: ['a', 'b'] })).toThrow(
      'podcast must be given once',
    );
    expect(() => parseSettingsScope('podcast', { podcast: '' })).toThrow(
      'podcast must be 1 to 2048 characters',
    );
    expect(() => parseSettingsScope('podcast', { podcast: 'x'.repeat(2049) })).toThrow(
      'podcast must be 1 to 2048 characters',
    );
  });

  it('check a settings change for its shape, then the number of keys, then each key, then the values', () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'x'.repeat(20_000)]));
    expect(parseSettingsUpdate('{}')).toEqual({ set: {}, remove: [] });
    expect(parseSettingsUpdate('{"set": {"constructor": 1, "10": 2}}')).toEqual({
      set: { constructor: 1, '10': 2 },
      remove: [],
    });
    expect(() => parseSettingsUpdate('[]')).toThrow('the body must be a JSON object');
    expect(() => parseSettingsUpdate(JSON.stringify({ set: many, remove: 'a' }))).toThrow(
      'remove must be a list of keys',
    );
    expect(() => parseSettingsUpdate(JSON.stringify({ set: [1] }))).toThrow(
      'set must be an object of settings',
    );
    expect(() => parseSettingsUpdate(JSON.stringify({ set: many }))).toThrow(
      'set must hold at most 100 keys',
    );
    expect(() =>
      parseSettingsUpdate(JSON.stringify({ set: { a: 'x'.repeat(20_000) }, remove: [7] })),
    ).toThrow('setting keys must be strings of 1 to 255 characters');
    expect(() => parseSettingsUpdate(JSON.stringify({ set: { a: 'x'.repeat(20_000) } }))).toThrow(
      'the value of "a" must be at most 16384 bytes of JSON',
    );
    expect(() => parseSettingsUpdate('{"set": {"__proto__": 1}}')).toThrow(/__proto__/);
  });
});
