import { ConfigError, loadConfig } from './config';

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
