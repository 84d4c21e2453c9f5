/** The feeds scenario's podcast feeds: RSS 2.0 with the iTunes and podcast namespaces, a few KB
 * each, every one told apart by its path (its title, author, guid and episodes derive from it), as
 * a publisher's feed would be; and how the scenario spreads them over its server's ports. */

/** Feeds served from one port: the resolver's per-host limit counts host and port together, so a
 * port stands for one publisher's host. */
export const FEEDS_PER_HOST = 100;

/** At least this many ports: with the default FEED_CONCURRENCY (16) and FEED_HOST_CONCURRENCY (2),
 * fewer hosts than 8 would let the per-host limit hold the fetches below the overall limit. */
export const MIN_HOSTS = 8;

/** How many ports serve `feeds` feeds. */
export const hostsFor = (feeds: number): number => Math.max(MIN_HOSTS, Math.ceil(feeds / FEEDS_PER_HOST));

/** The URL of feed `index` of a set (`set`: `a` for the feeds resolved alone, `b3` for round 3's
 * batch…) among `origins`, each origin in turn, so that consecutive feeds sit on different hosts. */
export const feedUrlOf = (origins: readonly string[], set: string, index: number): string =>
  `${origins[index % origins.length] as string}/${set}/${index}.xml`;

/** The feed a load run's client adds with item `item` of its request `sequence` when the run's feed
 * urls are shared by every client (`AddRequests.feedBases`), spread over the bases in turn. */
export const sharedFeedUrl = (bases: readonly string[], sequence: number, item: number): string =>
  `${bases[sequence % bases.length] as string}/r${sequence}/i${item}.xml`;

/** The set a feed's path belongs to: its first segment (`a`, `b3`, `w`…). */
export const setOf = (path: string): string => /^\/([^/?#]+)\//.exec(path)?.[1] ?? 'other';

/** FNV-1a, 32 bits: a path's stable number. */
export function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

const ADJECTIVES = [
  'Quiet',
  'Curious',
  'Late',
  'Open',
  'Northern',
  'Small',
  'Honest',
  'Slow',
  'Bright',
  'Hidden',
  'Weekly',
  'Little',
  'Long',
  'Restless',
  'Plain',
  'Wandering',
  'Second',
  'Careful',
  'Loud',
  'Green',
];
const NOUNS = [
  'Harbour',
  'Kitchen',
  'Library',
  'Garden',
  'Workshop',
  'Archive',
  'Signal',
  'Orchard',
  'Lighthouse',
  'Atlas',
  'Margin',
  'Studio',
  'Circuit',
  'Ledger',
  'Compass',
  'Porch',
  'Market',
  'Almanac',
  'Engine',
  'Field',
];
const TOPICS = [
  'history',
  'cooking',
  'science',
  'local news',
  'chess',
  'gardening',
  'economics',
  'film',
  'running',
  'languages',
  'jazz',
  'architecture',
  'software',
  'birdwatching',
  'philosophy',
  'football',
];
const CATEGORIES = [
  ['History', ''],
  ['Arts', 'Food'],
  ['Science', 'Natural Sciences'],
  ['News', 'Daily News'],
  ['Leisure', 'Games'],
  ['Leisure', 'Home &amp; Garden'],
  ['Business', 'Investing'],
  ['TV &amp; Film', 'Film Reviews'],
  ['Sports', 'Running'],
  ['Education', 'Language Learning'],
  ['Music', 'Music History'],
  ['Arts', 'Design'],
  ['Technology', ''],
  ['Science', 'Nature'],
  ['Society &amp; Culture', 'Philosophy'],
  ['Sports', 'Soccer'],
] as const;
const FIRST_NAMES = ['Maria', 'Tom', 'Ana', 'Kenji', 'Leila', 'Sam', 'Ingrid', 'Tunde', 'Priya', 'Jonas'];
const LAST_NAMES = ['Okafor', 'Reyes', 'Lima', 'Sato', 'Haddad', 'Berg', 'Novak', 'Adeyemi', 'Rao', 'Weber'];

/** Episodes a feed lists. */
export const EPISODES = 8;
/** The newest episode's date (feeds are the same at every run): 2026-11-24, 05:00 UTC. */
const NEWEST_MS = Date.UTC(2026, 10, 24, 5);
const WEEK_MS = 7 * 86_400_000;

const pick = <T>(values: readonly T[], n: number): T => values[n % values.length] as T;

/** A UUID-shaped string from a number, for guids. */
const uuidOf = (n: number, salt: number): string => {
  const hex = (value: number) => (value >>> 0).toString(16).padStart(8, '0');
  const a = hex(hashOf(`${n}:${salt}:a`));
  const b = hex(hashOf(`${n}:${salt}:b`));
  const c = hex(hashOf(`${n}:${salt}:c`));
  const d = hex(hashOf(`${n}:${salt}:d`));
  return `${a}-${b.slice(0, 4)}-5${b.slice(5, 8)}-9${c.slice(1, 4)}-${c.slice(4)}${d}`;
};

/** What a feed's path makes of it: its number, title and author. */
export function podcastOf(path: string): {
  readonly n: number;
  readonly title: string;
  readonly author: string;
} {
  const n = hashOf(path);
  const topic = pick(TOPICS, n >>> 4);
  const name = `${pick(ADJECTIVES, n)} ${pick(NOUNS, n >>> 8)}`;
  // The path in the title: distinct paths, distinct titles (the number alone could repeat).
  const id = path.replace(/^\//, '').replace(/\.xml$/, '');
  return {
    n,
    title: `The ${name}: ${topic} (${id})`,
    author: `${pick(FIRST_NAMES, n >>> 12)} ${pick(LAST_NAMES, n >>> 16)}`,
  };
}

const rfc822 = (ms: number): string => new Date(ms).toUTCString().replace('GMT', '+0000');

function episode(n: number, index: number, site: string, media: string): string {
  const number = 120 - index;
  const published = NEWEST_MS - index * WEEK_MS - (n % 3600) * 1000;
  const minutes = 20 + ((n >>> index) % 70);
  return `
    <item>
      <title>Ep. ${number} &#8211; ${pick(ADJECTIVES, n + index)} ${pick(NOUNS, (n >>> 3) + index).toLowerCase()}s and what they tell us</title>
      <itunes:episode>${number}</itunes:episode>
      <itunes:episodeType>full</itunes:episodeType>
      <guid isPermaLink="false">${uuidOf(n, index)}</guid>
      <link>${site}/episodes/${number}</link>
      <description><![CDATA[<p>In episode ${number} we talk about ${pick(TOPICS, n + index)} with a guest who has spent years on it, answer listeners' questions &amp; read the week's letters.</p>]]></description>
      <pubDate>${rfc822(published)}</pubDate>
      <enclosure url="${media}/${number}.mp3" length="${minutes * 960_000}" type="audio/mpeg"/>
      <itunes:duration>${minutes * 60}</itunes:duration>
      <itunes:explicit>false</itunes:explicit>
    </item>`;
}

/** The RSS document served at `path`: about 8 KB, the same for the same path. */
export function renderFeed(path: string): string {
  const { n, title, author } = podcastOf(path);
  const slug = path.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '');
  const site = `https://${slug}.podcasts.example.org`;
  const media = `https://media.example.net/${slug}`;
  const [category, subcategory] = pick(CATEGORIES, n >>> 4);
  const topic = pick(TOPICS, n >>> 4);
  const items = Array.from({ length: EPISODES }, (_, index) => episode(n, index, site, media)).join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel>
    <atom:link href="${site}/feed.xml" rel="self" type="application/rss+xml"/>
    <title>${title}</title>
    <generator>bench feed server</generator>
    <language>en-us</language>
    <copyright>&#169; 2026 ${author}</copyright>
    <podcast:locked>no</podcast:locked>
    <podcast:guid>${uuidOf(n, 999)}</podcast:guid>
    <itunes:author>${author}</itunes:author>
    <description><![CDATA[<p>A weekly show about ${topic}, hosted by ${author}: interviews, listener questions and the odd field recording.</p>]]></description>
    <itunes:summary>A weekly show about ${topic}, hosted by ${author}.</itunes:summary>
    <itunes:type>episodic</itunes:type>
    <itunes:owner>
      <itunes:name>${author}</itunes:name>
      <itunes:email>hello@${slug}.podcasts.example.org</itunes:email>
    </itunes:owner>
    <itunes:explicit>false</itunes:explicit>
    <itunes:category text="${category}">${subcategory ? `<itunes:category text="${subcategory}"/>` : ''}</itunes:category>
    <itunes:image href="${media}/cover-3000x3000.jpg"/>
    <image>
      <url>${media}/cover-1400x1400.jpg</url>
      <title>${title}</title>
      <link>${site}</link>
    </image>
    <link>${site}</link>${items}
  </channel>
</rss>
`;
}
