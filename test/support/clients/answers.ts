import { ApiResponse } from '../api-client';
import { CastlogUnderTest, TestUser } from '../start-castlog';
import { basicOf } from './wire';

/** What every simulated app checks in castlog's gpodder.net answers, failing as the app's own
 * parser would, with the step and the body in the message. */

/** Fails with the step, the status and the body when the status is not the one the app needs. */
export function expectStatus(step: string, response: ApiResponse, status: number | ((s: number) => boolean)) {
  const ok = typeof status === 'number' ? response.status === status : status(response.status);
  if (!ok)
    throw new Error(
      `${step}: status ${response.status}, the app needs ${typeof status === 'number' ? status : 'a 2xx'}\n${response.text.slice(0, 500)}`,
    );
}

/** A parse failure, as the app would hit it. */
export function parseFail(step: string, why: string, response: ApiResponse): never {
  throw new Error(`${step}: ${why}\nbody: ${response.text.slice(0, 500)}`);
}

/** gpodder.net timestamps: whole Unix seconds (not milliseconds), once the user has changed anything. */
export function expectUnixSeconds(step: string, value: unknown, response: ApiResponse): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    parseFail(step, `timestamp ${JSON.stringify(value)} is not an integer`, response);
  if (value < 1_600_000_000 || value > 9_999_999_999)
    parseFail(step, `timestamp ${value} is not Unix seconds`, response);
  return value;
}

const GPODDER_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
/** An instant as gpodder.net writes an action's timestamp: UTC, whole seconds, no zone. */
export const gpodderTime = (ms: number) => new Date(ms).toISOString().slice(0, 19);

export const strings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

export const sorted = (values: Iterable<string>) => [...values].sort();

/** update_urls as AntennaPod (getJSONArray(i).getString(0/1)), Kasts and mygpoclient read it. */
export function updateUrls(step: string, response: ApiResponse): [string, string][] {
  const pairs: unknown = response.body?.update_urls;
  if (!Array.isArray(pairs)) parseFail(step, 'update_urls is not a list', response);
  for (const pair of pairs)
    if (!Array.isArray(pair) || pair.length !== 2 || !strings(pair))
      parseFail(step, `update_urls item ${JSON.stringify(pair)} is not a pair of strings`, response);
  return pairs as [string, string][];
}

/** A device as every app reads the device list. */
export interface Device {
  readonly id: string;
  readonly caption: string;
  readonly type: string;
  readonly subscriptions: number;
}

/** An episode action as the apps hold one. */
export interface Action {
  readonly podcast: string;
  readonly episode: string;
  readonly action: 'download' | 'play' | 'delete' | 'new';
  readonly timestamp: string;
  readonly guid?: string;
  readonly device?: string;
  readonly started?: number;
  readonly position?: number;
  readonly total?: number;
}

/** The fields every app reads of a downloaded action, as they were uploaded. */
export const sameAction = (a: Action) => ({
  podcast: a.podcast,
  episode: a.episode,
  action: a.action,
  timestamp: a.timestamp,
  ...(a.action === 'play' ? { started: a.started, position: a.position, total: a.total } : {}),
});

/** Checks the actions list every app reads: podcast, episode, action strings, the timestamp in
 * gpodder's format, play fields integers, and no play fields on other actions (mygpoclient's
 * EpisodeAction refuses them). */
export function checkActions(step: string, response: ApiResponse): Action[] {
  const actions: unknown = response.body?.actions;
  if (!Array.isArray(actions)) parseFail(step, 'actions is not a list', response);
  for (const action of actions as Record<string, unknown>[]) checkAction(step, action, response);
  return actions as Action[];
}

function checkAction(step: string, action: Record<string, unknown>, response: ApiResponse): void {
  if (typeof action !== 'object' || action === null) parseFail(step, 'an action is not an object', response);
  for (const field of ['podcast', 'episode', 'action'])
    if (typeof action[field] !== 'string' || action[field] === '')
      parseFail(step, `an action's ${field} is not a non-empty string`, response);
  if (!['download', 'play', 'delete', 'new'].includes(action.action as string))
    parseFail(step, `action ${String(action.action)} is not one the apps know`, response);
  if (typeof action.timestamp !== 'string' || !GPODDER_TIME.test(action.timestamp))
    parseFail(step, `timestamp ${JSON.stringify(action.timestamp)} is not YYYY-MM-DDTHH:MM:SS`, response);
  for (const field of ['started', 'position', 'total']) {
    const value = action[field];
    if (action.action === 'play') {
      if (value !== undefined && value !== null && !Number.isSafeInteger(value))
        parseFail(step, `play's ${field} is not an integer`, response);
    } else if (value !== undefined && value !== null) {
      parseFail(step, `a ${String(action.action)} action carries ${field}`, response);
    }
  }
  for (const field of ['device', 'guid'])
    if (action[field] !== undefined && action[field] !== null && typeof action[field] !== 'string')
      parseFail(step, `an action's ${field} is not a string`, response);
}

/** The user's subscribed feeds, through the simple API with Basic. */
export async function serverFeeds(app: CastlogUnderTest, user: TestUser): Promise<string[]> {
  const response = await app.anonymous.request('GET', `/subscriptions/${user.name}.json`, {
    headers: { authorization: basicOf(user) },
  });
  expectStatus('GET /subscriptions/{user}.json', response, 200);
  if (!strings(response.body)) parseFail('simple API', 'not a list of URLs', response);
  return [...response.body].sort();
}
