import { ApiResponse } from '../api-client';
import { CastlogUnderTest, TestUser } from '../start-castlog';

interface StoredCookie {
  readonly value: string;
  readonly path: string;
  readonly secure: boolean;
  readonly httpOnly: boolean;
}

interface CookieAttributes {
  path: string;
  secure: boolean;
  httpOnly: boolean;
  expired: boolean;
}

/** RFC 6265 in the part these apps rely on: a cookie without Path gets the request's directory as
 * its path, is sent only to paths under its path, never over plain HTTP when Secure, and goes away
 * when a later Set-Cookie expires it. java.net.CookieManager, QNetworkCookieJar and Python's
 * CookieJar all behave so for host-only cookies. */
export class CookieJar {
  readonly cookies = new Map<string, StoredCookie>();

  receive(requestPath: string, setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const { expired, ...kept } = readAttributes(requestPath, attributes);
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, { value: pair.slice(eq + 1).trim(), ...kept });
    }
  }

  /** The Cookie header for a request to `requestPath` over plain HTTP. */
  header(requestPath: string): string | undefined {
    const sent = [...this.cookies]
      .filter(([, cookie]) => !cookie.secure && pathMatches(requestPath, cookie.path))
      .map(([name, cookie]) => `${name}=${cookie.value}`);
    return sent.length === 0 ? undefined : sent.join('; ');
  }
}

/** A Set-Cookie line's attributes; Max-Age wins over Expires, as RFC 6265 says. */
function readAttributes(requestPath: string, attributes: readonly string[]): CookieAttributes {
  const read: CookieAttributes = {
    path: defaultPath(requestPath),
    secure: false,
    httpOnly: false,
    expired: false,
  };
  let maxAge: number | undefined;
  let expires: number | undefined;
  for (const attribute of attributes) {
    const [key = '', ...rest] = attribute.split('=');
    const value = rest.join('=').trim();
    switch (key.trim().toLowerCase()) {
      case 'path':
        if (value.startsWith('/')) read.path = value;
        break;
      case 'secure':
        read.secure = true;
        break;
      case 'httponly':
        read.httpOnly = true;
        break;
      case 'max-age':
        maxAge = Number(value);
        break;
      case 'expires':
        expires = Date.parse(value);
        break;
      default:
        break;
    }
  }
  read.expired = maxAge !== undefined ? !(maxAge > 0) : expires !== undefined && expires <= Date.now();
  return read;
}

const pathOf = (target: string) => target.split('?')[0] ?? '/';
const defaultPath = (target: string) => {
  const path = pathOf(target);
  const slash = path.lastIndexOf('/');
  return !path.startsWith('/') || slash <= 0 ? '/' : path.slice(0, slash);
};
const pathMatches = (target: string, cookiePath: string) => {
  const path = pathOf(target);
  return (
    path === cookiePath ||
    (path.startsWith(cookiePath) && (cookiePath.endsWith('/') || path[cookiePath.length] === '/'))
  );
};

/** One app's HTTP client: its User-Agent, its cookie jar, every exchange logged for messages. */
export class Wire {
  readonly jar = new CookieJar();
  readonly exchanges: string[] = [];

  constructor(
    private readonly app: CastlogUnderTest,
    private readonly userAgent: string,
  ) {}

  async send(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<ApiResponse> {
    const all: Record<string, string> = { 'user-agent': this.userAgent, ...headers };
    const cookie = this.jar.header(path);
    if (cookie !== undefined) all.cookie = cookie;
    const response = await this.app.anonymous.request(method, path, { rawBody: body, headers: all });
    this.jar.receive(path, response.headers.getSetCookie());
    this.exchanges.push(`${method} ${path} → ${response.status} ${response.text.slice(0, 200)}`);
    return response;
  }
}

export const basicOf = (user: TestUser) =>
  `Basic ${Buffer.from(`${user.name}:${user.password}`, 'utf8').toString('base64')}`;
