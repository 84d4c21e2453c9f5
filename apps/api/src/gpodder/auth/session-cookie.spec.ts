import { clearedSessionCookie, readSessionCookie, sessionCookie } from './session-cookie';

describe('readSessionCookie', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['sessionid=abc', 'abc'],
    ['a=1; sessionid=abc; b=2', 'abc'],
    ['a=1;sessionid = abc ;b=2', 'abc'],
    ['sessionid="abc"', 'abc'],
    ['sessionid=', undefined],
    ['xsessionid=abc; sessionidx=def', undefined],
    ['sessionid=first; sessionid=second', 'first'],
    ['flag; sessionid=abc=def', 'abc=def'],
    [['a=1', 'sessionid=abc'], 'abc'],
  ])('reads %j as %j', (header, value) => {
    expect(readSessionCookie(header)).toBe(value);
  });
});

describe('sessionCookie', () => {
  const now = new Date('2024-11-23T10:00:00.000Z');
  const expiresAt = new Date('2024-12-07T10:00:00.900Z');

  it('is HttpOnly on Path=/ with SameSite=Lax, lasting until the session expires', () => {
    expect(sessionCookie('cl_token', expiresAt, now, false)).toBe(
      'sessionid=cl_token; Max-Age=1209600; Path=/; Expires=Sat, 07 Dec 2024 10:00:00 GMT; HttpOnly; SameSite=Lax',
    );
  });

  it('is Secure over HTTPS', () => {
    expect(sessionCookie('cl_token', expiresAt, now, true)).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
  });

  it('is cleared with an empty value that has already expired', () => {
    expect(clearedSessionCookie(false)).toBe(
      'sessionid=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    );
  });
});
