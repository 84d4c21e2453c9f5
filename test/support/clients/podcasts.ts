import { randomUUID } from 'node:crypto';
import { Action, gpodderTime } from './answers';

/** Feeds and episodes for the simulated apps to subscribe to and play. */

/** A feed URL no other test uses. */
export const feedUrl = (label: string) => `https://${label}.example.com/${randomUUID()}/feed.xml`;
export const episodeUrl = (feed: string, n: number) => feed.replace(/feed\.xml$/, `episode-${n}.mp3`);
/** A wall-clock instant (an action's own timestamp), some minutes ago. */
export const minutesAgo = (minutes: number) => gpodderTime(Date.now() - minutes * 60_000);

/** Episode `n` of `podcast` played up to `position` of `total` seconds, a few minutes ago. */
export const play = (podcast: string, n: number, position: number, total = 3600): Action => ({
  podcast,
  episode: episodeUrl(podcast, n),
  guid: `${podcast}#${n}`,
  action: 'play',
  timestamp: minutesAgo(10 - n / 10),
  started: Math.max(0, position - 60),
  position,
  total,
});
