import { checkFeedUrl } from '@castlog/domain';
import { materialize, Plan, trimLikeGpodder, World } from './generators';
import type { Answer } from './oracle';

/**
 * What Carol's subscription list is after her gpodder.net requests (test/fuzz/generators.ts
 * `carolPlans`), from the contract's rules: an added URL subscribes the feed it names after
 * trimming white space and normalising (creating it, spelled as trimmed, when the user has none),
 * a removed one unsubscribes it, a URL the OPA rules refuse is dropped; `update_urls` reports each
 * refused URL as `[url, ""]`, each URL held in another spelling as `[sent, stored]`, and each other
 * URL sent with white space around it as `[sent, trimmed]`; a simple-API PUT makes its list the
 * subscribed set. Carol is written through nothing else, so her list is exactly the model's.
 *
 * A client that syncs as the apps do — each download sent with the timestamp the last one
 * answered, its add and remove applied to what it holds — must hold the model's list after every
 * request: `since` is inclusive and misses nothing.
 */
export class CarolModel {
  /** Feeds by their normalised URL: the spelling castlog stores, and whether Carol is subscribed. */
  readonly feeds = new Map<string, { url: string; subscribed: boolean }>();
  /** The syncing client: what it holds, and the timestamp it sends back. */
  readonly held = new Set<string>();
  since = 0;

  subscribed(): string[] {
    return [...this.feeds.values()]
      .filter((feed) => feed.subscribed)
      .map((feed) => feed.url)
      .sort();
  }

  private subscribe(url: string): string {
    const checked = checkFeedUrl(url);
    if (!checked.ok) throw new Error(`model: ${url} is refused`);
    const feed = this.feeds.get(checked.normalized);
    if (feed) feed.subscribed = true;
    else this.feeds.set(checked.normalized, { url: checked.feedUrl, subscribed: true });
    return checked.normalized;
  }

  /** Applies a request Carol's plan made, from its answer; throws when the answer contradicts the
   * model. A refused request (4xx) changes nothing. */
  apply(plan: Plan, answer: Answer, world: World, where: string): void {
    if (answer.status !== 200) return;
    const text = materialize(plan.body as string, world);
    if (plan.route === 'gp-upload') {
      const { add, remove } = JSON.parse(text) as { add: string[]; remove: string[] };
      this.checkUpdateUrls(this.upload(add, remove), answer, where);
      return;
    }
    // A simple-API PUT: its list is the subscribed set (a JSONP list's body is JSON).
    const format = /\.(jsonp?|opml|txt)$/.exec(plan.target)?.[1];
    const urls = (
      format === 'json' || format === 'jsonp'
        ? (JSON.parse(text) as string[])
        : format === 'opml'
          ? [...text.matchAll(/xmlUrl="([^"]*)"/g)].map((match) => match[1]!.replace(/&amp;/g, '&'))
          : text.split('\n')
    ).map(trimLikeGpodder);
    const kept = new Set(
      urls.filter((url) => url !== '' && checkFeedUrl(url).ok).map((url) => this.subscribe(url)),
    );
    for (const [key, feed] of this.feeds) if (!kept.has(key)) feed.subscribed = false;
  }

  /** An upload applied to the model: what `update_urls` must say, by URL as sent. Each URL is
   * trimmed of white space first; one trimmed is reported `[sent, trimmed]` unless the rules say
   * more of it (refused, or stored in another spelling). */
  private upload(add: readonly string[], remove: readonly string[]): Map<string, string> {
    const expected = new Map<string, string>();
    const landed: [sent: string, trimmed: string, key: string][] = [];
    for (const sent of add) {
      const trimmed = trimLikeGpodder(sent);
      const checked = checkFeedUrl(trimmed);
      if (checked.ok) landed.push([sent, trimmed, this.subscribe(trimmed)]);
      else expected.set(sent, '');
    }
    for (const sent of remove) {
      const trimmed = trimLikeGpodder(sent);
      const checked = checkFeedUrl(trimmed);
      if (!checked.ok) {
        expected.set(sent, '');
        continue;
      }
      const feed = this.feeds.get(checked.normalized);
      if (feed !== undefined) feed.subscribed = false;
      const reported = feed === undefined ? trimmed : feed.url;
      if (reported !== sent) expected.set(sent, reported);
    }
    for (const [sent, trimmed, key] of landed) {
      const stored = this.feeds.get(key)!.url;
      if (stored !== sent) expected.set(sent, stored === trimmed ? trimmed : stored);
    }
    return expected;
  }

  private checkUpdateUrls(expected: Map<string, string>, answer: Answer, where: string): void {
    const got = [...((answer.json as { update_urls: [string, string][] }).update_urls ?? [])].sort();
    const want = [...expected].sort();
    if (JSON.stringify(got) !== JSON.stringify(want))
      throw new Error(
        `${where}: update_urls ${JSON.stringify(got).slice(0, 600)}, the model says ${JSON.stringify(want).slice(0, 600)}`,
      );
  }

  /** The syncing client's download: since the timestamp it got last, add and remove applied. */
  async sync(download: (since: number) => Promise<{ add: string[]; remove: string[]; timestamp: number }>) {
    const answer = await download(this.since);
    if (answer.timestamp < this.since)
      throw new Error(`the timestamp went back from ${this.since} to ${answer.timestamp}`);
    answer.add.forEach((url) => this.held.add(url));
    answer.remove.forEach((url) => this.held.delete(url));
    this.since = answer.timestamp;
    const held = [...this.held].sort();
    const want = this.subscribed();
    if (JSON.stringify(held) !== JSON.stringify(want))
      throw new Error(
        `a client syncing with since holds ${JSON.stringify(held)}, the model says ${JSON.stringify(want)} (last answer ${JSON.stringify(answer)})`,
      );
  }
}
