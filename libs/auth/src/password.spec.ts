import { dummyPasswordHash, hashPassword, verifyPassword } from './password';
import { generateToken, hashToken, isTokenShaped } from './token';

const cheap = { N: 1024, r: 8, p: 1 };

describe('password hashes', () => {
  it('encode scrypt parameters, salt and hash', async () => {
    expect(await hashPassword('pw', cheap)).toMatch(
      /^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/,
    );
  });

  it('use the default parameters (N = 2^15, r = 8, p = 1)', async () => {
    expect(await hashPassword('pw')).toMatch(/^scrypt\$32768\$8\$1\$/);
  });

  it('differ for the same password (random salt)', async () => {
    expect(await hashPassword('pw', cheap)).not.toBe(await hashPassword('pw', cheap));
  });

  it('verify the right password only', async () => {
    const hash = await hashPassword('correct horse', cheap);
    await expect(verifyPassword('correct horse', hash)).resolves.toBe(true);
    await expect(verifyPassword('correct hors', hash)).resolves.toBe(false);
    await expect(verifyPassword('', hash)).resolves.toBe(false);
  });

  it('treat canonically equivalent Unicode spellings alike (NFC)', async () => {
    const hash = await hashPassword('caf\u00e9', cheap);
    await expect(verifyPassword('cafe\u0301', hash)).resolves.toBe(true);
  });

  it('never match a malformed or unreasonable hash', async () => {
    const good = await hashPassword('pw', cheap);
    for (const bad of [
      '',
      'pw',
      good.replace('scrypt', 'bcrypt'),
      good.replace('$1024$', '$1000$'),
      good.replace('$1024$', `$${2 ** 24}$`),
      good.slice(0, -30),
    ]) {
      await expect(verifyPassword('pw', bad)).resolves.toBe(false);
    }
  });

  it('have a dummy no password matches', async () => {
    const dummy = dummyPasswordHash(cheap);
    expect(dummy).toMatch(/^scrypt\$1024\$8\$1\$/);
    await expect(verifyPassword('', dummy)).resolves.toBe(false);
  });
});

describe('tokens', () => {
  it('carry the cl_ prefix and 32 random bytes', () => {
    const token = generateToken();
    expect(token).toMatch(/^cl_[A-Za-z0-9_-]{43}$/);
    expect(isTokenShaped(token)).toBe(true);
    expect(generateToken()).not.toBe(token);
  });

  it('are stored as SHA-256 hex', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it.each(['', 'cl_', 'xx_' + 'a'.repeat(43), 'cl_' + 'a'.repeat(42), 'cl_' + 'a'.repeat(42) + '='])(
    'reject %j as token-shaped',
    (text) => expect(isTokenShaped(text)).toBe(false),
  );
});
