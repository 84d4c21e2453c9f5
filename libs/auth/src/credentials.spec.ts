import { CredentialVerifier, authenticate, parseAuthorization } from './credentials';

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('parseAuthorization', () => {
  describe('Bearer', () => {
    it('reads the token', () => {
      expect(parseAuthorization('Bearer cl_abc-DEF_123')).toEqual({
        kind: 'bearer',
        token: 'cl_abc-DEF_123',
      });
    });

    it('takes the scheme in any case and tolerates surrounding and repeated spaces', () => {
      expect(parseAuthorization('  bEaReR   tok.en~+/==  ')).toEqual({
        kind: 'bearer',
        token: 'tok.en~+/==',
      });
    });

    it.each([
      ['no token', 'Bearer'],
      ['an empty token', 'Bearer '],
      ['two tokens', 'Bearer a b'],
      ['characters outside token68', 'Bearer a,b'],
      ['padding inside the token', 'Bearer a=b'],
      ['no space after the scheme', 'Bearercl_abc'],
      ['a tab as separator', 'Bearer\tcl_abc'],
    ])('is null for %s', (_case, header) => {
      expect(parseAuthorization(header)).toBeNull();
    });
  });

  describe('Basic', () => {
    it('reads name and password', () => {
      expect(parseAuthorization(basic('alice:s3cret'))).toEqual({
        kind: 'basic',
        name: 'alice',
        password: 's3cret',
      });
    });

    it('splits at the first colon, so the password may hold colons', () => {
      expect(parseAuthorization(basic('alice:a:b::c'))).toEqual({
        kind: 'basic',
        name: 'alice',
        password: 'a:b::c',
      });
    });

    it('accepts an empty password and UTF-8', () => {
      expect(parseAuthorization(basic('zoë:'))).toEqual({ kind: 'basic', name: 'zoë', password: '' });
      expect(parseAuthorization(basic('bob:pässwörd ✓'))).toEqual({
        kind: 'basic',
        name: 'bob',
        password: 'pässwörd ✓',
      });
    });

    it('takes the scheme in any case', () => {
      expect(parseAuthorization(basic('a:b').replace('Basic', 'BASIC'))).toMatchObject({
        kind: 'basic',
        name: 'a',
      });
    });

    it.each([
      ['no colon', basic('alice')],
      ['an empty name', basic(':password')],
      ['no credentials', 'Basic'],
      ['base64url characters', 'Basic YWxp-2U6_w=='],
      ['a length that is not a multiple of 4', 'Basic YWxpY2U6cHc'],
      ['misplaced padding', 'Basic YW=xpY2U6cHc='],
      ['invalid UTF-8', `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')}`],
    ])('is null for %s', (_case, header) => {
      expect(parseAuthorization(header)).toBeNull();
    });
  });

  it.each([
    ['a missing header', undefined],
    ['an empty header', ''],
    ['blanks', '   '],
    ['another scheme', 'Digest username="alice"'],
    ['a bare token', 'cl_abc'],
  ])('is null for %s', (_case, header) => {
    expect(parseAuthorization(header)).toBeNull();
  });
});

describe('authenticate', () => {
  const now = new Date('2024-11-23T10:00:00.000Z');
  const calls: unknown[][] = [];
  const verifier: CredentialVerifier = {
    authenticateToken: async (token, at) => {
      calls.push(['token', token, at]);
      return token === 'cl_good' ? 'user-1' : null;
    },
    authenticatePassword: async (name, password) => {
      calls.push(['password', name, password]);
      return name === 'alice' && password === 'pw:1' ? 'user-2' : null;
    },
  };

  beforeEach(() => (calls.length = 0));

  it('checks a bearer token at the given time', async () => {
    await expect(authenticate(verifier, 'Bearer cl_good', now)).resolves.toBe('user-1');
    expect(calls).toEqual([['token', 'cl_good', now]]);
  });

  it('checks basic credentials', async () => {
    await expect(authenticate(verifier, basic('alice:pw:1'), now)).resolves.toBe('user-2');
    await expect(authenticate(verifier, basic('alice:pw:2'), now)).resolves.toBeNull();
  });

  it('asks the store nothing for a malformed header', async () => {
    await expect(authenticate(verifier, 'Bearer', now)).resolves.toBeNull();
    await expect(authenticate(verifier, undefined, now)).resolves.toBeNull();
    expect(calls).toEqual([]);
  });
});
