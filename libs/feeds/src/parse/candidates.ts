import { parseFeedDate } from './dates';

/** What a format's reader finds in a feed before castlog's rules for each value apply: every field's
 * texts in order of preference (the first that passes the rules is kept), episodes counted and dated. */
export interface FeedCandidates {
  readonly title: readonly string[];
  readonly description: readonly string[];
  readonly link: readonly string[];
  readonly imageUrl: readonly string[];
  readonly language: readonly string[];
  readonly author: readonly string[];
  readonly podcastGuid: readonly string[];
  readonly newFeedUrl: readonly string[];
  readonly episodeCount: number;
  readonly newestEpisodeAt?: Date;
}

/** Texts read longer than this are cut before castlog's rules see them: no field keeps more. */
export const MAX_TEXT_READ = 4_096;

/** The latest of the dates that parse, or undefined when none does. */
export function newestOf(dates: Iterable<string | undefined>): Date | undefined {
  let newest: Date | undefined;
  for (const text of dates) {
    const date = text === undefined ? undefined : parseFeedDate(text);
    if (date !== undefined && (newest === undefined || date.getTime() > newest.getTime())) newest = date;
  }
  return newest;
}
