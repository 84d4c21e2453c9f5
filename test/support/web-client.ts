/** A browser's part over plain HTTP: cookies kept, redirects not followed. */
export class WebClient {
  readonly cookies = new Map<string, string>();
  constructor(private readonly baseUrl: string) {}

  /** Sends `form` URL-encoded, or as multipart/form-data when it is a FormData (a file input). */
  async send(
    method: string,
    path: string,
    form?: Record<string, string> | FormData,
    headers: Record<string, string> = {},
  ) {
    const encoded = form === undefined || form instanceof FormData ? undefined : new URLSearchParams(form);
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(encoded ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      ...(form === undefined ? {} : { body: encoded ? encoded.toString() : (form as FormData) }),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, value] = pair!.split(/=(.*)/s);
      if (value === '') this.cookies.delete(name!);
      else this.cookies.set(name!, value!);
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  /** The CSRF token of the forms of the page at `path`. */
  async csrf(path: string): Promise<string> {
    const page = await this.send('GET', path);
    const token = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
    if (!token) throw new Error(`no CSRF token on ${path} (${page.status})`);
    return token;
  }

  async signIn(user: { name: string; password: string }) {
    const csrf = await this.csrf('/web/sign-in');
    return this.send('POST', '/web/sign-in', { csrf, name: user.name, password: user.password, next: '' });
  }
}
