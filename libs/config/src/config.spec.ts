import { ConfigError, loadConfig, UPLOAD_BODY_LIMIT_BYTES } from './config';

describe('GPODDER_API', () => {
  it('is on by default', () => expect(loadConfig({}).GPODDER_API).toBe(true));

  it('reads true/false, on/off, yes/no and 1/0 in any case, around spaces', () => {
    const read = (value: string) => loadConfig({ GPODDER_API: value }).GPODDER_API;
    expect(['true', 'ON', 'Yes', ' 1 '].map(read)).toEqual([true, true, true, true]);
    expect(['false', 'off', 'NO', '0'].map(read)).toEqual([false, false, false, false]);
  });

  it('refuses anything else, naming the setting', () => {
    for (const value of ['maybe', '', '2', 'enabled']) {
      expect(() => loadConfig({ GPODDER_API: value })).toThrow(ConfigError);
      expect(() => loadConfig({ GPODDER_API: value })).toThrow(/GPODDER_API: must be on or off/);
    }
  });
});

describe('PUBLIC_URL', () => {
  it('is unset by default, and kept without its trailing slashes', () => {
    expect(loadConfig({}).PUBLIC_URL).toBeUndefined();
    expect(loadConfig({ PUBLIC_URL: 'https://podcasts.example.org/castlog/' }).PUBLIC_URL).toBe(
      'https://podcasts.example.org/castlog',
    );
    expect(loadConfig({ PUBLIC_URL: 'http://192.168.1.20:3000' }).PUBLIC_URL).toBe(
      'http://192.168.1.20:3000',
    );
  });

  it('refuses what is not an http(s) URL to put links after, naming the setting', () => {
    for (const value of [
      'podcasts.example.org',
      'ftp://example.org',
      'https://a.example/?x=1',
      'https://u:p@a.example',
    ]) {
      expect(() => loadConfig({ PUBLIC_URL: value })).toThrow(/PUBLIC_URL: must be/);
    }
  });
});

describe('numbers and durations that would break the server later', () => {
  it('refuses an empty number rather than reading it as 0', () => {
    expect(() => loadConfig({ PORT: '' })).toThrow(/PORT: must be a whole number/);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: ' ' })).toThrow(
      /DATABASE_POOL_SIZE: must be a whole number/,
    );
    expect(loadConfig({ PORT: '0' }).PORT).toBe(0);
  });

  it("refuses a body limit above the upload routes' (the largest event it makes must fit the log)", () => {
    expect(loadConfig({ BODY_LIMIT_BYTES: String(UPLOAD_BODY_LIMIT_BYTES) }).BODY_LIMIT_BYTES).toBe(
      UPLOAD_BODY_LIMIT_BYTES,
    );
    expect(() => loadConfig({ BODY_LIMIT_BYTES: String(UPLOAD_BODY_LIMIT_BYTES + 1) })).toThrow(
      /BODY_LIMIT_BYTES: Number must be less than or equal to 4194304/,
    );
  });

  it('refuses 0 for every wait and lifetime, and a wait longer than a timer can hold', () => {
    for (const name of [
      'DATABASE_CONNECT_TIMEOUT',
      'KAFKA_SESSION_TIMEOUT',
      'READ_YOUR_WRITES_TIMEOUT',
      'REQUEST_TIMEOUT',
      'SHUTDOWN_TIMEOUT',
      'ACCESS_TOKEN_TTL',
      'REFRESH_TOKEN_TTL',
      'CLI_TOKEN_TTL',
    ]) {
      expect(() => loadConfig({ [name]: '0' })).toThrow(new RegExp(`${name}: must be more than 0`));
    }
    expect(() => loadConfig({ REQUEST_TIMEOUT: '25d' })).toThrow(/REQUEST_TIMEOUT: must be at most 24d/);
    expect(loadConfig({ REQUEST_TIMEOUT: '24d' }).REQUEST_TIMEOUT).toBe(24 * 86_400_000);
    expect(() => loadConfig({ CLI_TOKEN_TTL: '100000000d' })).toThrow(
      /CLI_TOKEN_TTL: must be at most 36500d/,
    );
    expect(loadConfig({ CLI_TOKEN_TTL: '36500d' }).CLI_TOKEN_TTL).toBe(36_500 * 86_400_000);
    expect(loadConfig({ TOKEN_CACHE_TTL: '0' }).TOKEN_CACHE_TTL).toBe(0);
  });

  it('refuses a READ_MODEL_SCHEMA too long for the schemas named after it to keep within 63 characters', () => {
    const longest = 'r'.repeat(50);
    expect(loadConfig({ READ_MODEL_SCHEMA: longest }).READ_MODEL_SCHEMA).toBe(longest);
    expect(`${longest}_v9999_replay`).toHaveLength(63);
    expect(() => loadConfig({ READ_MODEL_SCHEMA: `${longest}r` })).toThrow(
      /READ_MODEL_SCHEMA: must be at most 50 characters/,
    );
  });

  it('refuses a DATABASE_URL that is not postgres://', () => {
    expect(() => loadConfig({ DATABASE_URL: 'http://example.com' })).toThrow(
      /DATABASE_URL: must be a postgres:\/\/ URL/,
    );
    for (const url of ['postgres://u:p@localhost:5432/db', 'postgresql://localhost/db'])
      expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
  });
});

describe('the feed resolver settings', () => {
  it('fetch every feed daily, 5 MiB at most, public addresses only, by default', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      FEEDS: true,
      FEED_REFRESH_INTERVAL: 86_400_000,
      FEED_MAX_BYTES: 5 * 1024 * 1024,
      FEEDS_ALLOW_PRIVATE: false,
      FEEDS_ALLOWED_RANGES: [],
    });
    expect(loadConfig({ FEEDS: 'off', FEED_REFRESH_INTERVAL: '2s' })).toMatchObject({
      FEEDS: false,
      FEED_REFRESH_INTERVAL: 2000,
    });
  });

  it('read a list of CIDR ranges and refuse what is not one, naming the setting', () => {
    expect(loadConfig({ FEEDS_ALLOWED_RANGES: ' 127.0.0.1/32, fd00::/8 ' }).FEEDS_ALLOWED_RANGES).toEqual([
      '127.0.0.1/32',
      'fd00::/8',
    ]);
    for (const bad of ['127.0.0.1', '10.0.0.0/33', 'fd00::/129', 'localhost/8', '10.0.0.0/8,'])
      expect(() => loadConfig({ FEEDS_ALLOWED_RANGES: bad })).toThrow(
        /FEEDS_ALLOWED_RANGES: must be a comma-separated list of CIDR/,
      );
  });

  it('reads CORS_ORIGINS as a list of origins, none by default, and refuses what is not an origin', () => {
    expect(loadConfig({}).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example, http://localhost:8080' }).CORS_ORIGINS).toEqual([
      'https://app.example',
      'http://localhost:8080',
    ]);
    for (const bad of [
      '*',
      'app.example',
      'https://app.example/',
      'https://app.example/path',
      'ftp://app.example',
    ])
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(
        /CORS_ORIGINS: must be a comma-separated list of origins/,
      );
  });
});
