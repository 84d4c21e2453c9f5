import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Browser, Locator, Page } from 'playwright-core';
import { feed } from '../support/contract';
import type { CastlogUnderTest, TestUser } from '../support/start-castlog';
import { axeViolations, launchChromium, openPage, PageWatch } from './browser';

const basic = (name: string, password: string) =>
  `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

/** Signs in through the form and lands on the subscriptions page. */
async function signIn(page: Page, app: { url: string }, user: { name: string; password: string }) {
  await page.goto(`${app.url}/web/sign-in`);
  await page.getByLabel('User name').fill(user.name);
  await page.getByLabel('Password').fill(user.password);
  await submit(page, 'Sign in');
  await page.waitForURL(/\/web\/subscriptions/);
}

/** The page's accessibility problems axe-core calls serious or critical: none allowed. */
async function expectAccessible(page: Page) {
  expect(await axeViolations(page)).toEqual([]);
}

/** Clicks a form's button and waits for the page the form's answer loads. */
async function submit(page: Page, name: string | RegExp, within: Page | Locator = page) {
  await Promise.all([page.waitForEvent('load'), within.getByRole('button', { name }).click()]);
}

/** Follows a link of the navigation. */
async function follow(page: Page, name: string) {
  await Promise.all([page.waitForEvent('load'), page.getByRole('link', { name, exact: true }).click()]);
}

const textOf = async (locator: Locator) => (await locator.textContent())?.trim();

/** The subscriptions page's row that shows `url`. */
const rowOf = (page: Page, url: string) => page.getByRole('row').filter({ hasText: url });

/** What the flows need of a running castlog: its address, its users, its APIs, and a way to wait
 * for what finishes in the background. */
export type PageTarget = Pick<CastlogUnderTest, 'url' | 'users' | 'anonymous' | 'freshUser' | 'as' | 'until'>;

/** Every flow of the web pages in Chromium, against the castlog `target` answers (after the
 * caller's beforeAll has started it), each test with a fresh user and a fresh browser context. */
export function pageFlows(target: () => PageTarget): void {
  let app: PageTarget;
  let browser: Browser;
  let alice: TestUser;
  let page: Page;
  let watch: PageWatch;
  beforeAll(async () => {
    app = target();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    alice = await app.freshUser();
    ({ page, watch } = await openPage(browser));
  });
  afterEach(async () => {
    await page.context().close();
    expect(watch.problems).toEqual([]);
  });

  it('signs in (a wrong password says so), shows the subscriptions page, and signs out', async () => {
    await page.goto(`${app.url}/web/subscriptions`);
    expect(page.url()).toContain('/web/sign-in?next=%2Fweb%2Fsubscriptions');
    await expectAccessible(page);
    await page.getByLabel('User name').fill(alice.name);
    await page.getByLabel('Password').fill('wrong');
    await submit(page, 'Sign in');
    expect(await textOf(page.getByRole('alert'))).toBe('Wrong user name or password.');
    await page.getByLabel('Password').fill(alice.password);
    await submit(page, 'Sign in');
    await page.waitForURL(/\/web\/subscriptions$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Subscriptions');
    await expectAccessible(page);
    await submit(page, `Sign out ${alice.name}`);
    await page.waitForURL(/\/web\/sign-in$/);
    await page.goto(`${app.url}/web/devices`);
    expect(page.url()).toContain('/web/sign-in');
  });

  it('adds a feed (refusing one /v1 refuses, with its message), unsubscribes, resubscribes and deletes it', async () => {
    await signIn(page, app, alice);
    await page.getByLabel('Feed URL').fill('ftp://example.com/rss');
    await submit(page, 'Subscribe');
    expect(await textOf(page.getByRole('alert'))).toBe('Unsupported protocol');
    expect(await page.getByLabel('Feed URL').inputValue()).toBe('ftp://example.com/rss');
    const url = feed('web');
    await page.getByLabel('Feed URL').fill(url);
    await submit(page, 'Subscribe');
    await page.waitForURL(/done=added/);
    expect(await textOf(rowOf(page, url))).toContain('Subscribed');
    const listed = (await app.as(alice).get('/v1/subscriptions')).body.subscriptions;
    expect(listed).toEqual([expect.objectContaining({ feed_url: url, is_subscribed: true })]);

    await submit(page, `Unsubscribe from ${url}`, rowOf(page, url));
    await page.waitForURL(/done=unsubscribed/);
    expect(await textOf(rowOf(page, url))).toContain('Unsubscribed');
    expect((await app.as(alice).get('/v1/subscriptions')).body.subscriptions[0].is_subscribed).toBe(false);
    await submit(page, `Resubscribe to ${url}`, rowOf(page, url));
    await page.waitForURL(/done=resubscribed/);
    expect(await textOf(rowOf(page, url))).toContain('Subscribed');

    await submit(page, `Delete ${url}`, rowOf(page, url));
    await page.waitForURL(/done=deleting/);
    await expectAccessible(page);
    await app.until('the deletion finished', async () => {
      await page.goto(`${app.url}/web/subscriptions`);
      return (await rowOf(page, url).count()) === 0;
    });
    expect((await app.as(alice).get(`/v1/subscriptions/${listed[0].guid}`)).status).toBe(410);
  });

  it('filters by URL', async () => {
    const [news, sport] = [feed('news'), feed('sport')];
    await app
      .as(alice)
      .post('/v1/subscriptions', { subscriptions: [{ feed_url: news }, { feed_url: sport }] });
    await signIn(page, app, alice);
    await page.getByLabel('Filter by name or URL').fill('sport');
    await submit(page, 'Filter');
    expect(await rowOf(page, sport).count()).toBe(1);
    expect(await rowOf(page, news).count()).toBe(0);
  });

  it('imports an OPML file with a summary, and exports the same feeds', async () => {
    const urls = [feed('o1'), feed('o2'), feed('o3')];
    const opml =
      '<?xml version="1.0"?><opml version="2.0"><head><title>mine</title></head><body>' +
      urls.map((url) => `<outline type="rss" text="x" xmlUrl="${url}"/>`).join('') +
      '<outline type="rss" text="bad" xmlUrl="ftp://example.com/bad.xml"/></body></opml>';
    await signIn(page, app, alice);
    await follow(page, 'OPML');
    await expectAccessible(page);
    await page
      .getByLabel('OPML file')
      .setInputFiles({ name: 'mine.opml', mimeType: 'text/x-opml', buffer: Buffer.from(opml) });
    await submit(page, 'Import');
    expect(await textOf(page.getByRole('status'))).toContain(
      'Read 4 feeds: 3 subscribed (new or already there), 1 failed',
    );
    expect(await page.getByRole('row').filter({ hasText: 'ftp://example.com/bad.xml' }).count()).toBe(1);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: /Download/ }).click();
    const exported = await (await download).createReadStream();
    let text = '';
    for await (const chunk of exported) text += String(chunk);
    expect([...text.matchAll(/xmlUrl="([^"]+)"/g)].map((match) => match[1]).sort()).toEqual([...urls].sort());
  });

  it('creates an app password that works as the Basic password on gpodder.net and /v1 until revoked', async () => {
    await signIn(page, app, alice);
    await follow(page, 'App passwords');
    await page.getByLabel('App name').fill('AntennaPod');
    await submit(page, 'Create');
    const password = (await page.locator('.secret').textContent())!.trim();
    await expectAccessible(page);
    const devices = `/api/2/devices/${alice.name}.json`;
    const withAppPassword = app.anonymous.withAuthorization(basic(alice.name, password));
    expect((await withAppPassword.get(devices)).status).toBe(200);
    expect((await withAppPassword.get('/v1/subscriptions')).status).toBe(200);
    await page.goto(`${app.url}/web/app-passwords`);
    expect(await page.locator('.secret').count()).toBe(0);
    expect(await page.getByRole('row').filter({ hasText: 'AntennaPod' }).count()).toBe(1);
    await submit(page, 'Revoke the password of AntennaPod');
    await page.waitForURL(/done=revoked/);
    expect((await withAppPassword.get(devices)).status).toBe(401);
    expect((await withAppPassword.get('/v1/subscriptions')).status).toBe(401);
  });

  it('changes the password and ends the other sign-in', async () => {
    const other = await openPage(browser);
    await signIn(other.page, app, alice);
    await signIn(page, app, alice);
    await follow(page, 'Account');
    await expectAccessible(page);
    await page.getByLabel('Current password').fill(alice.password);
    await page.getByLabel('New password', { exact: true }).fill('a new passphrase');
    await page.getByLabel('New password again').fill('a new passphrase');
    await submit(page, 'Change password');
    await page.waitForURL(/done=password/);
    await other.page.goto(`${app.url}/web/subscriptions`);
    expect(other.page.url()).toContain('/web/sign-in');
    await other.context.close();
    expect(other.watch.problems).toEqual([]);
    await page.goto(`${app.url}/web/devices`);
    expect(page.url()).toContain('/web/devices');
    const oldPassword = app.anonymous.withAuthorization(basic(alice.name, alice.password));
    expect((await oldPassword.get('/v1/subscriptions')).status).toBe(401);
  });

  it('lets an administrator add and remove a user; others get 403', async () => {
    await signIn(page, app, alice);
    expect((await page.goto(`${app.url}/web/admin`))!.status()).toBe(403);
    await app.users.setAdmin(alice.name, true);
    await page.goto(`${app.url}/web/admin`);
    await expectAccessible(page);
    const name = `carol-${Date.now()}`;
    await page.getByLabel('User name').fill(name);
    await page.getByLabel('Password', { exact: true }).fill('carols password');
    await submit(page, 'Add user');
    await page.waitForURL(/done=added/);
    expect(await app.users.authenticatePassword(name, 'carols password')).not.toBeNull();
    const row = page.getByRole('row').filter({ hasText: name });
    await row.getByLabel(`remove ${name}`).check();
    await submit(page, 'Remove', row);
    await page.waitForURL(/done=removed/);
    expect(await app.users.authenticatePassword(name, 'carols password')).toBeNull();
  });

  it('shows devices, when each was last used, and listening history, and renames a device', async () => {
    const gpodder = app.anonymous.withAuthorization(basic(alice.name, alice.password));
    await gpodder.post(`/api/2/devices/${alice.name}/phone.json`, { caption: 'Phone', type: 'mobile' });
    const podcast = feed('listened');
    // The phone's last use: the episode upload naming it, applied between these two instants.
    const beforeUpload = Date.now();
    await gpodder.post(`/api/2/episodes/${alice.name}.json`, [
      {
        podcast,
        episode: `${podcast}/e1.mp3`,
        action: 'play',
        device: 'phone',
        timestamp: '2026-12-01T10:00:00',
        started: 0,
        position: 725,
        total: 2700,
      },
    ]);
    const afterUpload = Date.now();
    await signIn(page, app, alice);
    await follow(page, 'Devices');
    await expectAccessible(page);
    const lastUsed = page.locator('section.device').filter({ hasText: 'Last used' }).locator('time');
    const iso = await lastUsed.getAttribute('datetime');
    expect(Date.parse(iso ?? '')).toBeGreaterThanOrEqual(beforeUpload);
    expect(Date.parse(iso ?? '')).toBeLessThanOrEqual(afterUpload);
    expect(await textOf(page.locator('section.device p', { hasText: 'Last used' }))).toBe(
      `Last used ${iso?.slice(0, 10)} ${iso?.slice(11, 16)} UTC.`,
    );
    await page.getByLabel('Name').fill('Pixel');
    await submit(page, 'Save');
    await page.waitForURL(/done=saved/);
    expect((await gpodder.get(`/api/2/devices/${alice.name}.json`)).body).toEqual([
      expect.objectContaining({ id: 'phone', caption: 'Pixel', type: 'mobile' }),
    ]);
    // Renaming the device is a use of it too.
    expect(Date.parse((await lastUsed.getAttribute('datetime')) ?? '')).toBeGreaterThan(
      Date.parse(iso ?? ''),
    );
    await follow(page, 'Listening history');
    await expectAccessible(page);
    expect(await textOf(page.getByRole('row').filter({ hasText: `${podcast}/e1.mp3` }))).toContain(
      '12:05 of 45:00',
    );
  });

  it('shows hostile feed URLs and captions as text, running no script', async () => {
    const hostile = `https://evil.example/feed?x="><img/src=x/onerror=alert(1)><script>alert(2)</script>`;
    const added = await app.as(alice).post('/v1/subscriptions', { subscriptions: [{ feed_url: hostile }] });
    expect(added.body.success).toHaveLength(1);
    const caption = `"><script>alert(3)</script><img src=x onerror=alert(4)>`;
    const gpodder = app.anonymous.withAuthorization(basic(alice.name, alice.password));
    expect((await gpodder.post(`/api/2/devices/${alice.name}/evil.json`, { caption })).status).toBe(200);
    await signIn(page, app, alice);
    expect(await textOf(page.locator('td.podcast .url'))).toBe(added.body.success[0].feed_url);
    await follow(page, 'Devices');
    expect(await textOf(page.getByRole('heading', { level: 2 }))).toBe(caption);
    expect(await page.locator('script, img').count()).toBe(0);
    // watch.problems (checked after each test) holds any dialog the markup opened.
  });

  it('refuses a form posted from another site without its token (403), changing nothing', async () => {
    await signIn(page, app, alice);
    const attack = await serveAttackPage(`${app.url}/web/subscriptions`, feed('csrf'));
    try {
      const answer = page.waitForResponse((response) => response.url() === `${app.url}/web/subscriptions`);
      await page.goto(attack.url);
      expect((await answer).status()).toBe(403);
    } finally {
      attack.server.close();
    }
    expect((await app.as(alice).get('/v1/subscriptions')).body.subscriptions).toEqual([]);
  });
}

/** A page on another origin whose form posts to `target` on load: what a malicious site serves. It
 * runs a script, which its own origin allows. */
async function serveAttackPage(target: string, feedUrl: string): Promise<{ server: Server; url: string }> {
  const html =
    `<!doctype html><form id="f" method="post" action="${target}">` +
    `<input name="feed_url" value="${feedUrl}"></form><script>document.getElementById('f').submit()</script>`;
  const server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/html' }).end(html),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}
