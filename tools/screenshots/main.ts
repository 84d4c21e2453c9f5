/** `npm run screenshots`: castlog on a scratch embedded database, an account filled with example
 * data (feeds served here, so the pages show their titles), and every page at desktop and phone
 * width saved into docs/screenshots/. Needs Chromium (CHROMIUM_PATH, default /usr/bin/chromium). */
import 'reflect-metadata';
import { apiHttpOptions } from '@castlog/api';
import { AuthStore } from '@castlog/auth';
import { loadConfig } from '@castlog/config';
import { createHttpApp } from '@castlog/http';
import { repoRoot } from '@castlog/infra';
import { openRuntime } from '@castlog/runtime/open-runtime';
import { createServer } from 'node:http';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, Page } from 'playwright-core';
import pino from 'pino';
import { EmbeddedAppModule } from '../../apps/embedded/src/embedded-app.module';

const out = join(repoRoot(__dirname), 'docs', 'screenshots');
const PODCASTS = [
  'The Daily Commute',
  'Deep Space Radio',
  'Kitchen Table Science',
  'History at Noon',
  'Open Source Hour',
];
const SIZES = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;
const PAGES = ['subscriptions', 'devices', 'history', 'opml', 'app-passwords', 'account', 'admin'] as const;
const log = (line: string) => console.error(`[screenshots] ${line}`);

/** Example feeds on 127.0.0.1, one per podcast title. */
async function serveFeeds(): Promise<{ urls: string[]; close(): void }> {
  const server = createServer((request, response) => {
    const index = Number(/\/(\d+)\.xml$/.exec(request.url ?? '')?.[1]);
    const title = PODCASTS[index] ?? 'Unknown';
    response
      .writeHead(200, { 'content-type': 'application/rss+xml' })
      .end(
        `<?xml version="1.0"?><rss version="2.0"><channel><title>${title}</title><link>https://example.org/</link>` +
          `<description>${title}</description><item><title>Episode 1</title><guid>${index}-1</guid></item></channel></rss>`,
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    urls: PODCASTS.map((_, i) => `http://127.0.0.1:${port}/feeds/${i}.xml`),
    close: () => server.close(),
  };
}

async function fill(url: string, name: string, password: string, feeds: string[]): Promise<void> {
  const auth = {
    authorization: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`,
    'content-type': 'application/json',
  };
  const post = (path: string, body: unknown) =>
    fetch(new URL(path, url), { method: 'POST', headers: auth, body: JSON.stringify(body) });
  await post('/v1/subscriptions', { subscriptions: feeds.map((feed_url) => ({ feed_url })) });
  await post(`/api/2/devices/${name}/pixel.json`, { caption: 'Pixel 8', type: 'mobile' });
  await post(`/api/2/devices/${name}/laptop.json`, { caption: 'Work laptop', type: 'laptop' });
  await post(
    `/api/2/episodes/${name}.json`,
    feeds.slice(0, 3).map((podcast, i) => ({
      podcast,
      episode: `${podcast.replace('.xml', '')}/episode-${i + 1}.mp3`,
      action: 'play',
      device: 'pixel',
      timestamp: `2026-12-0${i + 1}T08:30:00`,
      started: 0,
      position: 600 + i * 300,
      total: 2400,
    })),
  );
  const listed = (await (await fetch(new URL('/v1/subscriptions', url), { headers: auth })).json()) as {
    subscriptions: { guid: string; feed_url: string }[];
  };
  // The first podcast is shown unsubscribed (untilTitled waits for the others).
  const first = listed.subscriptions.find((subscription) => subscription.feed_url === feeds[0])!;
  await fetch(new URL(`/v1/subscriptions/${first.guid}`, url), {
    method: 'PATCH',
    headers: auth,
    body: JSON.stringify({ is_subscribed: false }),
  });
}

/** Until the OPML export names every podcast by its title (30 s at most). */
async function untilTitled(url: string, name: string, password: string): Promise<void> {
  const headers = { authorization: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}` };
  let opml = '';
  for (let tries = 0; tries < 60; tries += 1) {
    const answer = await fetch(new URL(`/subscriptions/${name}.opml`, url), { headers });
    opml = `${answer.status} ${await answer.text()}`;
    if (PODCASTS.slice(1).every((title) => opml.includes(title))) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the example feeds were not read within 30 s; the export said: ${opml.slice(0, 2000)}`);
}

async function shoot(url: string, name: string, password: string): Promise<void> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    for (const [size, viewport] of Object.entries(SIZES)) {
      const page: Page = await (await browser.newContext({ viewport })).newPage();
      await page.goto(`${url}/web/sign-in`);
      await page.screenshot({ path: join(out, `sign-in-${size}.png`), fullPage: true });
      await page.getByLabel('User name').fill(name);
      await page.getByLabel('Password').fill(password);
      await Promise.all([
        page.waitForURL(/subscriptions/),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      for (const path of PAGES) {
        await page.goto(`${url}/web/${path}`);
        await page.screenshot({ path: join(out, `${path}-${size}.png`), fullPage: true });
      }
      log(`${size}: ${PAGES.length + 1} pages`);
    }
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'castlog-screenshots-'));
  // As root, the embedded PostgreSQL runs as `postgres`, which must reach the directory.
  await chmod(dataDir, 0o755);
  const feeds = await serveFeeds();
  const config = loadConfig({
    CASTLOG_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    FEEDS_ALLOWED_RANGES: '127.0.0.1/32',
    FEED_REFRESH_INTERVAL: '1h',
  });
  const runtime = await openRuntime(config);
  const app = await createHttpApp(
    EmbeddedAppModule.forRuntime(runtime),
    config,
    pino({ level: config.LOG_LEVEL }, pino.destination(2)),
    apiHttpOptions(config),
  );
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = await app.getUrl();
    const [name, password] = ['alice', 'correct horse battery'];
    const store = new AuthStore(runtime.database.dataSource);
    await store.addUser(name, password, { admin: true });
    await store.addUser('bob', 'another example password');
    await store.createAppPassword(
      (await store.listUsers()).find((user) => user.name === name)!.id,
      'AntennaPod on the Pixel',
    );
    await fill(url, name, password, feeds.urls);
    log('waiting for the feeds to be read');
    await untilTitled(url, name, password);
    await mkdir(out, { recursive: true });
    await shoot(url, name, password);
    log(`saved in ${out}`);
  } finally {
    await app.close();
    await runtime.close();
    feeds.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
