import { chunksOf, MAX_CHUNK_ITEMS } from './opml';

const feeds = (count: number, urlLength = 40) =>
  Array.from({ length: count }, (_, i) => ({
    url: `https://a.example/${String(i).padEnd(urlLength - 18, 'x')}`,
  }));

describe('chunksOf', () => {
  it('cuts 10,000 feeds into ten chunks of 1000, in order', () => {
    const all = feeds(10_000);
    const chunks = chunksOf(all);
    expect(chunks.map((chunk) => chunk.length)).toEqual(Array(10).fill(MAX_CHUNK_ITEMS));
    expect(chunks.flat()).toEqual(all);
  });

  it('leaves the remainder in a last, shorter chunk, and nothing for no feeds', () => {
    expect(chunksOf(feeds(2_500)).map((chunk) => chunk.length)).toEqual([1000, 1000, 500]);
    expect(chunksOf(feeds(1)).map((chunk) => chunk.length)).toEqual([1]);
    expect(chunksOf([])).toEqual([]);
  });

  it('keeps a chunk of long URLs within about 1 MB of JSON', () => {
    const all = feeds(1_000, 2_048);
    const chunks = chunksOf(all);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.flat()).toEqual(all);
    for (const chunk of chunks) {
      const json = JSON.stringify(
        chunk.map((feed) => ({ feedUrl: feed.url, candidateGuid: crypto.randomUUID() })),
      );
      expect(Buffer.byteLength(json)).toBeLessThanOrEqual(1_000_000);
    }
  });

  it('puts a URL larger than a chunk in a chunk of its own', () => {
    const huge = { url: `https://a.example/${'x'.repeat(1_100_000)}` };
    expect(chunksOf([...feeds(2), huge, ...feeds(2)]).map((chunk) => chunk.length)).toEqual([2, 1, 2]);
  });
});
