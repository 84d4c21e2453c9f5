import { FeedCatalog } from '@castlog/feeds';
import { ExpiringMap } from '@castlog/supervision';
import { Inject, Injectable } from '@nestjs/common';

/** How long a title (or the lack of one) is shown without asking the catalog again: titles change
 * when the resolver reads a feed again, once a day by default. */
const TITLE_TTL_MS = 60_000;
/** Most feeds remembered at once; the oldest go first (about 1 MB at most). */
const MAX_ENTRIES = 10_000;

/** The feed titles a page of a user's own subscriptions shows, remembered for a minute in this
 * process, so that showing a page again costs no catalog query beside the listing's own. Only for
 * URLs read from the subscriptions of the user the page is for (`FeedCatalog.titlesOfHeld`). */
@Injectable()
export class FeedTitles {
  /** Each URL's title, or null for a feed the catalog cannot name. */
  private readonly titles = new ExpiringMap<string, string | null>(MAX_ENTRIES);

  constructor(@Inject(FeedCatalog) private readonly catalog: FeedCatalog) {}

  async of(urls: readonly string[], nowMs: number = Date.now()): Promise<Map<string, string>> {
    const missing = urls.filter((url) => this.titles.get(url, nowMs) === undefined);
    if (missing.length > 0) {
      const found = await this.catalog.titlesOfHeld(missing);
      for (const url of missing) this.titles.set(url, found.get(url) ?? null, nowMs + TITLE_TTL_MS);
    }
    return new Map(
      urls.flatMap((url) => {
        const title = this.titles.get(url, nowMs);
        return typeof title === 'string' ? [[url, title] as const] : [];
      }),
    );
  }
}
