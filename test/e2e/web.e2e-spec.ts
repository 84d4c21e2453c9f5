import * as fc from 'fast-check';
import { feed } from '../support/contract';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';
import { WebClient } from '../support/web-client';

describe('the web pages over HTTP', () => {
  let app: CastlogUnderTest;
  let alice: TestUser;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());
  beforeEach(async () => (alice = await app.freshUser()));

  it('sends a visitor who is not signed in to the sign-in page, and the root to the pages', async () => {
    const web = new WebClient(app.url);
    const page = await web.send('GET', '/web/history?page=2');
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/web/sign-in?next=%2Fweb%2Fhistory%3Fpage%3D2');
    expect((await web.send('GET', '/')).headers.get('location')).toBe('/web/subscriptions');
  });

  it('goes back after sign-in only to a page of this site', async () => {
    for (const [next, location] of [
      ['/web/history?page=2', '/web/history?page=2'],
      ['//evil.example/web', '/web/subscriptions'],
      ['https://evil.example/web/x', '/web/subscriptions'],
      ['/web/\\evil.example', '/web/subscriptions'],
      ['/web/a\r\nSet-Cookie: x=1', '/web/subscriptions'],
      ['/web/ä', '/web/subscriptions'],
    ]) {
      const web = new WebClient(app.url);
      const csrf = await web.csrf('/web/sign-in');
      const answer = await web.send('POST', '/web/sign-in', {
        csrf,
        name: alice.name,
        password: alice.password,
        next: next!,
      });
      expect([next, answer.status, answer.headers.get('location')]).toEqual([next, 303, location]);
    }
  });

  it('answers HEAD like GET, without a form token', async () => {
    const web = new WebClient(app.url);
    await web.signIn(alice);
    const head = await web.send('HEAD', '/web/subscriptions');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('serves every page with a policy that runs no script, no caching and no sniffing', async () => {
    const web = new WebClient(app.url);
    const signIn = await web.send('GET', '/web/sign-in');
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(signIn.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(signIn.headers.get('content-security-policy')).not.toContain('script-src');
    expect(signIn.headers.get('x-content-type-options')).toBe('nosniff');
    expect(signIn.headers.get('cache-control')).toBe('no-store');
    expect(signIn.text).not.toMatch(/<script/i);
  });

  it('sets an HttpOnly, SameSite=Lax session cookie (not Secure over http) and ends it on sign-out', async () => {
    const web = new WebClient(app.url);
    const answer = await web.signIn(alice);
    expect(answer.status).toBe(303);
    const cookie = answer.headers.getSetCookie().find((line) => line.startsWith('castlog_web='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    const csrf = await web.csrf('/web/subscriptions');
    const session = web.cookies.get('castlog_web')!;
    expect((await web.send('POST', '/web/sign-out', { csrf })).status).toBe(303);
    expect(await app.users.sessionOwner(session, new Date(), 'web')).toBeNull();
  });

  it('refuses every form without its token: 403, an HTML page, nothing changed', async () => {
    const web = new WebClient(app.url);
    await web.signIn(alice);
    for (const csrf of [undefined, '', 'forged', (await web.csrf('/web/subscriptions')).slice(1)]) {
      const answer = await web.send('POST', '/web/subscriptions', {
        ...(csrf === undefined ? {} : { csrf }),
        feed_url: feed('csrf'),
      });
      expect(answer.status).toBe(403);
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(answer.text).toContain('403: Forbidden');
    }
    const signIn = await new WebClient(app.url).send('POST', '/web/sign-in', {
      name: alice.name,
      password: alice.password,
    });
    expect(signIn.status).toBe(403);
    expect((await app.as(alice).get('/v1/subscriptions')).body.subscriptions).toEqual([]);
  });

  it('imports an OPML file of 10,000 feeds in one form post, and says what failed and why', async () => {
    const web = new WebClient(app.url);
    await web.signIn(alice);
    const urls = Array.from({ length: 10_000 }, (_, i) => `https://feeds.example.org/${alice.name}/${i}.xml`);
    const opml =
      '<?xml version="1.0" encoding="utf-8"?><opml version="2.0"><head><title>big</title></head><body>' +
      [...urls, 'javascript:alert(1)']
        .map((url) => `<outline type="rss" text="t" xmlUrl="${url}"/>`)
        .join('\n') +
      '</body></opml>';
    const form = new FormData();
    form.set('csrf', await web.csrf('/web/opml'));
    form.set('file', new Blob([opml], { type: 'text/x-opml' }), 'big.opml');
    const answer = await web.send('POST', '/web/opml/import', form);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('Read 10001 feeds: 10000 subscribed (new or already there), 1 failed');
    expect(answer.text).toContain('javascript:alert(1)</td><td>Unsupported protocol');
    const listed = await app.as(alice).get('/v1/subscriptions');
    expect(listed.body.total).toBe(10_000);
    const again = await web.send('POST', '/web/opml/import', form);
    expect(again.text).toContain('10000 subscribed');
    expect((await app.as(alice).get('/v1/subscriptions')).body.total).toBe(10_000);
  });

  it('counts wrong passwords on the sign-in form against the address, as the APIs do', async () => {
    const limited = await startCastlog({ log: 'postgres', env: { RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const web = new WebClient(limited.url);
      const user = await limited.freshUser();
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 5; attempt += 1)
        statuses.push((await web.signIn({ name: user.name, password: 'wrong' })).status);
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      const blocked = await web.signIn(user);
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(blocked.headers.get('content-type')).toBe('text/html; charset=utf-8');
    } finally {
      await limited.close();
    }
  });

  it("lets an administrator reset a user's password, which ends that user's sign-ins", async () => {
    const bob = await app.freshUser();
    await app.users.setAdmin(alice.name, true);
    const [admin, bobsBrowser] = [new WebClient(app.url), new WebClient(app.url)];
    await admin.signIn(alice);
    await bobsBrowser.signIn(bob);
    expect((await bobsBrowser.send('GET', '/web/devices')).status).toBe(200);
    const csrf = await admin.csrf('/web/admin');
    const reset = await admin.send('POST', `/web/admin/users/${encodeURIComponent(bob.name)}/password`, {
      csrf,
      password: 'a fresh start',
    });
    expect(reset.headers.get('location')).toBe('/web/admin?done=reset');
    expect((await bobsBrowser.send('GET', '/web/devices')).status).toBe(303);
    expect(await app.users.authenticatePassword(bob.name, 'a fresh start')).toBe(bob.id);
    expect(await app.users.authenticatePassword(bob.name, bob.password)).toBeNull();
    const missing = await admin.send('POST', '/web/admin/users/nobody-here/password', {
      csrf,
      password: 'x',
    });
    expect(missing.status).toBe(404);
  });

  it('creates one app password per form: the same form sent again (a reload) creates nothing', async () => {
    const user = await app.freshUser();
    const web = new WebClient(app.url);
    await web.signIn(user);
    const page = await web.send('GET', '/web/app-passwords');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const form = /name="form" value="([0-9a-f-]{36})"/.exec(page.text)![1]!;
    const first = await web.send('POST', '/web/app-passwords', { csrf, form, name: 'AntennaPod' });
    expect(first.status).toBe(200);
    const secret = /clapp_[A-Za-z0-9_-]{43}/.exec(first.text)?.[0];
    expect(secret).toBeDefined();
    // The page that shows it carries a new form.
    expect(/name="form" value="([0-9a-f-]{36})"/.exec(first.text)![1]).not.toBe(form);

    const again = await web.send('POST', '/web/app-passwords', { csrf, form, name: 'AntennaPod' });
    expect(again.status).toBe(200);
    expect(again.text).toContain('This form was sent before: it created the password of AntennaPod');
    expect(again.text).not.toMatch(/clapp_/);
    expect(again.text.match(/aria-label="Revoke the password of AntennaPod"/g)).toHaveLength(1);
    const basic = `Basic ${Buffer.from(`${user.name}:${secret}`).toString('base64')}`;
    const listed = await fetch(new URL('/v1/subscriptions', app.url), { headers: { authorization: basic } });
    expect(listed.status).toBe(200);

    const refused = await web.send('POST', '/web/app-passwords', { csrf, form: 'not-a-form', name: 'x' });
    expect(refused.status).toBe(400);
  });

  it('keeps forms to the pages: the APIs still refuse a form body', async () => {
    const answer = await fetch(new URL('/v1/subscriptions', app.url), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${alice.token}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'feed_url=https://example.com/a.xml',
    });
    expect(answer.status).toBe(405);
  });

  it("shows each device's last use in UTC, and 'unknown' for a device stored before last uses were", async () => {
    const basic = `Basic ${Buffer.from(`${alice.name}:${alice.password}`).toString('base64')}`;
    const gpodder = app.anonymous.withAuthorization(basic);
    for (const device of ['old', 'phone'])
      expect((await gpodder.post(`/api/2/devices/${alice.name}/${device}.json`, {})).status).toBe(200);
    const { dataSource, schema } = app.runtime.database;
    // As the migration leaves a device stored before it.
    await dataSource.query(
      `UPDATE "${schema}".devices SET last_used = NULL WHERE user_id = $1 AND id = 'old'`,
      [alice.id],
    );
    const [phone] = await dataSource.query(
      `SELECT last_used::float8 AS last_used FROM "${schema}".devices WHERE user_id = $1 AND id = 'phone'`,
      [alice.id],
    );
    const iso = new Date(phone.last_used).toISOString();
    const web = new WebClient(app.url);
    await web.signIn(alice);
    const [, old, shown] = (await web.send('GET', '/web/devices')).text.split('<section class="device"');
    expect(old).toContain('<code>old</code>');
    expect(old).toContain('Last used: unknown.');
    expect(shown).toContain('<code>phone</code>');
    expect(shown).toContain(
      `Last used <time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>.`,
    );
  });

  it('a web session is not a gpodder.net session, nor the reverse', async () => {
    const web = new WebClient(app.url);
    await web.signIn(alice);
    const session = web.cookies.get('castlog_web')!;
    const gpodder = await fetch(new URL(`/api/2/devices/${alice.name}.json`, app.url), {
      headers: { cookie: `sessionid=${session}` },
    });
    expect(gpodder.status).toBe(401);
    const page = await fetch(new URL('/web/devices', app.url), {
      redirect: 'manual',
      headers: { cookie: `castlog_web=${(await app.users.issueSession(alice.id)).token}` },
    });
    expect(page.status).toBe(303);
  });

  it('answers hostile form input with a page, never a 5xx, and changes nothing without the token', async () => {
    // An administrator, so that the administration routes run their handlers too.
    await app.users.setAdmin(alice.name, true);
    const web = new WebClient(app.url);
    await web.signIn(alice);
    const csrf = await web.csrf('/web/subscriptions');
    const paths = [
      '/web/subscriptions',
      '/web/subscriptions/00000000-0000-4000-8000-000000000000/delete',
      '/web/subscriptions/not-a-guid/unsubscribe',
      '/web/devices/phone',
      '/web/devices/a%20b',
      '/web/app-passwords',
      '/web/app-passwords/x/revoke',
      '/web/account/password',
      '/web/opml/import',
      '/web/admin/users',
      `/web/admin/users/${encodeURIComponent(alice.name)}/remove`,
      '/web/admin/users/nobody/password',
      '/web/admin/users/%00/remove',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...paths),
        fc.dictionary(
          fc.constantFrom(
            'feed_url',
            'caption',
            'type',
            'name',
            'password',
            'new_password',
            'confirm_password',
            'current_password',
            'confirm',
            'admin',
            'x',
          ),
          fc.string({ maxLength: 300 }),
        ),
        fc.boolean(),
        async (path, fields, withToken) => {
          const answer = await web.send('POST', path, { ...fields, ...(withToken ? { csrf } : {}) });
          expect(answer.status).toBeLessThan(500);
          expect(answer.text).not.toMatch(/\bat .+\.(ts|js):\d+/);
          if (answer.status !== 303)
            expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
          if (!withToken) expect(answer.status).toBe(403);
        },
      ),
      { numRuns: 150 },
    );
    const subscriptions = (await app.as(alice).get('/v1/subscriptions')).body.subscriptions as {
      feed_url: string;
    }[];
    expect(subscriptions.every((subscription) => subscription.feed_url.startsWith('http'))).toBe(true);
  });
});

describe('WEB_UI=off', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres', env: { WEB_UI: 'off' } })));
  afterAll(() => app?.close());

  it('removes every page: 404', async () => {
    for (const path of ['/', '/web', '/web/sign-in', '/web/subscriptions', '/web/castlog.css'])
      expect((await fetch(new URL(path, app.url), { redirect: 'manual' })).status).toBe(404);
  });
});

describe('PUBLIC_URL over https', () => {
  let app: CastlogUnderTest;
  beforeAll(
    async () =>
      (app = await startCastlog({ log: 'postgres', env: { PUBLIC_URL: 'https://podcasts.example.org' } })),
  );
  afterAll(() => app?.close());

  it('makes the session cookie Secure', async () => {
    const user = await app.freshUser();
    const answer = await new WebClient(app.url).signIn(user);
    expect(answer.headers.getSetCookie().find((line) => line.startsWith('castlog_web='))).toMatch(/Secure/);
  });
});
