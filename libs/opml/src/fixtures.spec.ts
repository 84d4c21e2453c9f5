import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseOpml, toOpml, type OpmlFeed } from './opml';

/** OPML exports as real apps write them (their writers' element order, quoting and escaping). */
const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', name), 'utf8');

const expected: Record<string, OpmlFeed[]> = {
  // AntennaPod's OpmlWriter: Android's XmlSerializer, text and title, type rss or atom, htmlUrl.
  'antennapod.opml': [
    { url: 'https://feeds.simplecast.com/EmVW7VGp', title: 'Radiolab' },
    { url: 'https://feeds.megaphone.fm/darknetdiaries', title: 'Darknet Diaries' },
    { url: 'https://podcasts.example.org/atom.xml?show=science&format=audio', title: 'Science & Society' },
    { url: 'https://logbuch-netzpolitik.de/feed/m4a', title: 'Logbuch:Netzpolitik' },
    { url: 'https://feeds.example.fr/rtl/les-grosses-tetes.xml', title: "Les Grosses Têtes – l'intégrale" },
    {
      url: 'https://zeitonline.example.de/verbrechen/feed.xml?utm_source=antennapod&utm_medium=app',
      title: '"Zeit" Verbrechen <live>',
    },
    { url: 'https://www.nhk.example.jp/r-news/podcast/rss.xml', title: 'ラジオ日本語' },
  ],
  // Pocket Casts: OPML 1.0, the feeds inside one "feeds" outline, text only.
  'pocket-casts.opml': [
    { url: 'https://feeds.simplecast.com/54nAGcIl', title: 'The Daily' },
    { url: 'https://feeds.feedburner.com/dancarlin/history?format=xml', title: 'Hardcore History' },
    { url: 'https://feeds.megaphone.fm/replyall?ref=pocketcasts&x=1', title: 'Reply All & Friends' },
    { url: 'https://anchor.fm/s/cafe-babel/podcast/rss', title: 'Café Bâbel — Épisodes' },
    { url: 'https://feeds.simplecast.com/BqbsxVfO', title: '99% Invisible' },
    { url: 'https://uebermedien.example.de/feed/podcast/', title: 'Übermedien Holger ruft an' },
  ],
  // Apple Podcasts: folders nested in a "Podcasts" outline, a numeric entity, a feed listed twice
  // and a link outline without xmlUrl.
  'apple-podcasts.opml': [
    { url: 'https://feeds.npr.org/510318/podcast.xml', title: 'Up First' },
    {
      url: 'https://feeds.example.com/the-rest-is-politics?id=1611374685&country=gb',
      title: 'The Rest Is Politics',
    },
    { url: 'https://feeds.simplecast.com/dHoohVNH', title: 'Conan O’Brien Needs A Friend' },
    { url: 'https://feeds.example.es/senal-perdida.rss', title: 'Señal Perdida · Historias' },
  ],
  // gPodder's opml.Exporter: minidom's pretty XML, title before text (the description).
  'gpodder.opml': [
    { url: 'https://sixgun.example.org/feed/lo-ogg', title: 'Linux Outlaws' },
    { url: 'https://chaosradio.de/feed/m4a?lang=de&v=2', title: 'Chaosradio' },
    { url: 'https://podcast.example.ru/moskva/rss', title: 'Москва слезам не верит' },
    { url: 'https://twit.example.tv/floss.xml', title: 'FLOSS Weekly' },
    { url: 'https://latenightlinux.example.com/feed/extra', title: 'Late Night Linux <Extra>' },
  ],
};

describe.each(Object.keys(expected))('%s', (name) => {
  it('parses to exactly the feeds it holds', () => {
    expect(parseOpml(fixture(name)).feeds).toEqual(expected[name]);
  });

  it('round-trips through toOpml and parseOpml', () => {
    const { feeds } = parseOpml(fixture(name));
    expect(parseOpml(toOpml(feeds, { title: name, dateCreated: new Date(0) })).feeds).toEqual(feeds);
  });
});
