import axe from 'axe-core';
import { existsSync } from 'node:fs';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';

/** Debian's Chromium (`apt install chromium`; `.ci/run` installs it), or the one CHROMIUM_PATH
 * names: the browser tests download no browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumInstalled = existsSync(CHROMIUM);
if (!chromiumInstalled)
  process.stderr.write(`${CHROMIUM} is missing: the browser tests did not run (install chromium)\n`);

/** Headless, and quiet on the network: without these flags Chromium keeps trying to reach
 * Google's services, which a closed network refuses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** What a page did that it must not: a dialog opened (a script injected by a feed URL or a caption
 * would open one), an error in its console (a refused script, a broken page), an uncaught error. */
export class PageWatch {
  readonly problems: string[] = [];

  constructor(page: Page) {
    page.on('dialog', (dialog) => {
      this.problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('console', (message) => {
      // The browser reports a 4xx/5xx document as a failed load; the tests check statuses themselves.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        this.problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.problems.push(`page error: ${error.message}`));
  }
}

/** A fresh browser context (no cookies) and a page in it, watched. */
export async function openPage(
  browser: Browser,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<{ context: BrowserContext; page: Page; watch: PageWatch }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  return { context, page, watch: new PageWatch(page) };
}

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: string[];
}

/** axe-core's serious and critical violations on the page as it is now. axe runs through the
 * DevTools protocol, which the pages' Content-Security-Policy (no scripts) does not apply to. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axe.source);
  const options = {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  };
  const results = (await page.evaluate(`axe.run(document, ${JSON.stringify(options)})`)) as axe.AxeResults;
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? null,
      help: violation.help,
      targets: violation.nodes.map((node) => String(node.target)),
    }));
}
