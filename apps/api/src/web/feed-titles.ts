import { FeedCatalog } from '@castlog/feeds';
import { Inject, Injectable } from '@nestjs/common';

/** How long a title (or the lack of one) is shown without asking the catalog again: titles change
 * when the resolver reads a feed again, once a day by default. */
const TITLE_TTL_MS = 60_000;
/** Most feeds remembered at once; the oldest go first (about 1 MB at most). */
const MAX_ENTRIES = 10_000;

interface Entry {
  readonly title: string | undefined;
  readonly until: number;
}

/** The feed titles a page of a user's own subscriptions shows, remembered for a minute in this
 * process, so that showing a page again costs no catalog query beside the listing's own. Only for
 * URLs read from the subscriptions of the user the page is for (`FeedCatalog.titlesOfHeld`). */
@Injectable()
export class FeedTitles {
  private readonly entries = new Map<string, Entry>();

  constructor(@Inject(FeedCatalog) private readonly catalog: FeedCatalog) {}

  async of(urls: readonly string[], nowMs: number = Date.now()): Promise<Map<string, string>> {
    const missing = urls.filter((url) => !((this.entries.get(url)?.until ?? 0) > nowMs));
    if (missing.length > 0) {
      const found = await this.catalog.titlesOfHeld(missing);
      for (const url of missing) this.remember(url, found.get(url), nowMs);
    }
    return new Map(
      urls.flatMap((url) => {
        const title = this.entries.get(url)?.title;
        return title === undefined ? [] : [[url, title] as const];
      }),
    );
  }

  private remember(url: string, title: string | undefined, nowMs: number): void {
    this.entries.delete(url);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(url, { title, until: nowMs + TITLE_TTL_MS });
  }
}
