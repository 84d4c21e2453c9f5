import { FeedCatalog } from '@castlog/feeds';
import { FeedTitles } from './feed-titles';

/** A catalog that counts what it is asked. */
function catalogOf(titles: Record<string, string>) {
  const asked: string[][] = [];
  const catalog = {
    titlesOfHeld: async (urls: readonly string[]) => {
      asked.push([...urls]);
      return new Map(urls.flatMap((url) => (titles[url] ? [[url, titles[url]] as const] : [])));
    },
  } as unknown as FeedCatalog;
  return { catalog, asked };
}

describe('FeedTitles', () => {
  const [a, b] = ['https://a.example/rss', 'https://b.example/rss'];

  it('asks the catalog once a minute for a URL, titled or not', async () => {
    const { catalog, asked } = catalogOf({ [a]: 'A' });
    const titles = new FeedTitles(catalog);
    expect(await titles.of([a, b], 0)).toEqual(new Map([[a, 'A']]));
    expect(await titles.of([a, b], 59_999)).toEqual(new Map([[a, 'A']]));
    expect(asked).toEqual([[a, b]]);
    expect(await titles.of([b, a], 60_000)).toEqual(new Map([[a, 'A']]));
    expect(asked).toEqual([
      [a, b],
      [b, a],
    ]);
  });

  it('asks only for the URLs it does not know', async () => {
    const { catalog, asked } = catalogOf({ [b]: 'B' });
    const titles = new FeedTitles(catalog);
    await titles.of([a], 0);
    expect(await titles.of([a, b], 10)).toEqual(new Map([[b, 'B']]));
    expect(asked).toEqual([[a], [b]]);
  });

  it('keeps at most 10,000 URLs, forgetting the oldest first', async () => {
    const { catalog, asked } = catalogOf({});
    const titles = new FeedTitles(catalog);
    const urls = Array.from({ length: 10_001 }, (_, i) => `https://f.example/${i}`);
    await titles.of(urls, 0);
    await titles.of([urls[10_000]!, urls[1]!], 1);
    expect(asked.slice(1)).toEqual([]);
    await titles.of([urls[0]!], 2);
    expect(asked.slice(1)).toEqual([[urls[0]]]);
  });
});
