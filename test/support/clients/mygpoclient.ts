import { ApiResponse } from '../api-client';
import { CastlogUnderTest, TestUser } from '../start-castlog';
import {
  Action,
  checkActions,
  Device,
  expectStatus,
  expectUnixSeconds,
  parseFail,
  strings,
  updateUrls,
} from './answers';
import { basicOf, Wire } from './wire';

/** JSON the way Python's json.dumps writes it: `, ` and `: ` separators, non-ASCII escaped. */
const pythonJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, item]) => `${pythonJson(key)}: ${pythonJson(item)}`)
      .join(', ')}}`;
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
};

const PYTHON_REALM = /(?:^|,)[ \t]*([^ \t,]+)[ \t]+realm=(["']?)([^"']*)\2/i;

/**
 * mygpoclient (gPodder desktop's client library, mygpoclient/http.py, json.py, locator.py,
 * api.py, simple.py; the real library drives castlog in test/mygpoclient): urllib with an
 * HTTPBasicAuthHandler and an HTTPCookieProcessor. Every request goes out first WITHOUT
 * credentials; only a 401 carrying `WWW-Authenticate: Basic realm="…"` makes it resend with
 * `Authorization: Basic`, and its SimpleHttpPasswordManager answers credentials at most 3 times per
 * client — so after the first challenge the session cookie castlog sets must carry every later
 * request. `User-agent: mygpoclient/1.9 (+http://gpodder.org/mygpoclient/)`; bodies are
 * json.dumps (`", "` and `": "` separators, non-ASCII as \uXXXX) sent with urllib's default
 * `Content-Type: application/x-www-form-urlencoded`; an empty answer body decodes to None, which
 * update_device_settings and put_subscriptions take as success (gpodder.net answers both with an
 * empty 200); any non-2xx raises (400 BadRequest, 401 Unauthorized, 404 NotFound).
 *   gPodder's sync (src/gpodder/my.py MygPoClient._worker_proc), as mygpoclient sends it:
 *   1. update_device_settings: POST /api/2/devices/{user}/{device}.json `{"caption": …, "type": …}`.
 *   2. synchronize_subscriptions: pull_subscriptions(device, since) — GET /api/2/subscriptions/
 *      {user}/{device}.json?since=<int> (checks add/remove are lists of str, int(timestamp)) — then,
 *      when anything is queued, update_subscriptions — POST the same path `{"add": […],
 *      "remove": […]}` (int(timestamp), update_urls a list of (str, str)); the answered timestamp is
 *      stored as the next since.
 *   3. synchronize_episodes: download_episode_actions(since) — GET /api/2/episodes/{user}.json?since=
 *      <int> (each action through EpisodeAction.from_dictionary: action one of download, play,
 *      delete, new, flattr; started/position/total only on play; timestamp one of
 *      `%Y-%m-%dT%H:%M:%S`, with `.%f`, or with `Z`) — then upload_episode_actions — POST a JSON
 *      array of to_dictionary() (podcast, episode, action, device, timestamp, started, position,
 *      total when set).
 *   Also get_devices (GET /api/2/devices/{user}.json: id, caption, type in VALID_TYPES, int
 *   subscriptions), the simple API's get_subscriptions/put_subscriptions (GET and PUT
 *   /subscriptions/{user}/{device}.json, a JSON list of URLs) and gPodder's OPML download of the
 *   user's subscriptions (/subscriptions/{user}.opml, Basic).
 */
export class Mygpo {
  readonly wire: Wire;
  /** SimpleHttpPasswordManager.find_user_password calls: at most 3 answer credentials. */
  challenges = 0;
  /** gPodder's queue (SubscribeAction, EpisodeAction) and SinceValue store. */
  readonly feeds = new Set<string>();
  add: string[] = [];
  remove: string[] = [];
  actions: Action[] = [];
  podcastsSince = 0;
  episodesSince = 0;
  /** update_urls of the last update_subscriptions. */
  updatedUrls: [string, string][] = [];
  readonly received: Action[] = [];

  constructor(
    app: CastlogUnderTest,
    readonly user: TestUser,
    readonly deviceId: string,
  ) {
    this.wire = new Wire(app, 'mygpoclient/1.9 (+http://gpodder.org/mygpoclient/)');
  }

  /** HttpClient._request through urllib's opener: without credentials, then with them on a Basic
   * challenge; a non-2xx answer raises. Answers the decoded JSON (None for an empty body). */
  async request(
    method: string,
    path: string,
    data?: unknown,
  ): Promise<{ response: ApiResponse; json: unknown }> {
    const step = `mygpoclient ${method} ${path}`;
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    const body = data === undefined ? undefined : pythonJson(data);
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    let response = await this.wire.send(method, path, headers, body);
    if (response.status === 401) {
      this.answerChallenge(step, response);
      response = await this.wire.send(method, path, { ...headers, authorization: basicOf(this.user) }, body);
    }
    expectStatus(step, response, (status) => status >= 200 && status < 300);
    if (response.text === '') return { response, json: null };
    try {
      return { response, json: JSON.parse(response.text) };
    } catch {
      parseFail(step, 'JsonException: the answer is not JSON', response);
    }
  }

  /** HTTPBasicAuthHandler: a Basic challenge it parses, credentials at most 3 times. */
  private answerChallenge(step: string, response: ApiResponse): void {
    const challenge = response.headers.get('www-authenticate') ?? '';
    const match = PYTHON_REALM.exec(challenge);
    if (!match || match[1]!.toLowerCase() !== 'basic')
      parseFail(
        step,
        `401 without a Basic challenge urllib answers (${JSON.stringify(challenge)})`,
        response,
      );
    this.challenges += 1;
    if (this.challenges > 3)
      parseFail(step, 'a 4th challenge: the password manager gives up (Unauthorized)', response);
  }

  async updateDeviceSettings(caption: string, type: string): Promise<boolean> {
    const { json } = await this.request('POST', `/api/2/devices/${this.user.name}/${this.deviceId}.json`, {
      caption,
      type,
    });
    return json === null;
  }

  async getDevices(): Promise<Device[]> {
    const { response, json } = await this.request('GET', `/api/2/devices/${this.user.name}.json`);
    if (!Array.isArray(json)) parseFail('mygpoclient get_devices', 'not a list', response);
    for (const device of json)
      if (
        typeof device?.id !== 'string' ||
        typeof device.caption !== 'string' ||
        !['desktop', 'laptop', 'mobile', 'server', 'other'].includes(device.type) ||
        !Number.isSafeInteger(device.subscriptions)
      )
        parseFail('mygpoclient get_devices', `PodcastDevice refuses ${JSON.stringify(device)}`, response);
    return json;
  }

  async updateSubscriptions(add: string[], remove: string[]) {
    const step = 'mygpoclient update_subscriptions';
    const { response, json } = await this.request(
      'POST',
      `/api/2/subscriptions/${this.user.name}/${this.deviceId}.json`,
      { add, remove },
    );
    if (json === null) parseFail(step, 'InvalidResponse: empty response', response);
    return {
      updateUrls: updateUrls(step, response),
      since: expectUnixSeconds(step, response.body.timestamp, response),
    };
  }

  async pullSubscriptions(since: number) {
    const step = `mygpoclient pull_subscriptions(${since})`;
    const { response, json } = await this.request(
      'GET',
      `/api/2/subscriptions/${this.user.name}/${this.deviceId}.json?since=${since}`,
    );
    const { add, remove, timestamp } = (json ?? {}) as Record<string, unknown>;
    if (!strings(add) || !strings(remove)) parseFail(step, 'InvalidResponse: add/remove', response);
    return { add, remove, since: expectUnixSeconds(step, timestamp, response) };
  }

  async uploadEpisodeActions(actions: Action[]): Promise<number> {
    const step = 'mygpoclient upload_episode_actions';
    const { response } = await this.request(
      'POST',
      `/api/2/episodes/${this.user.name}.json`,
      actions.map((action) => ({
        podcast: action.podcast,
        episode: action.episode,
        action: action.action,
        ...(action.device === undefined ? {} : { device: action.device }),
        timestamp: action.timestamp,
        ...(action.action === 'play'
          ? { started: action.started, position: action.position, total: action.total }
          : {}),
      })),
    );
    return expectUnixSeconds(step, response.body?.timestamp, response);
  }

  async downloadEpisodeActions(since: number, filter = '') {
    const step = `mygpoclient download_episode_actions(${since}${filter})`;
    const { response } = await this.request(
      'GET',
      `/api/2/episodes/${this.user.name}.json?since=${since}${filter}`,
    );
    return {
      actions: checkActions(step, response),
      since: expectUnixSeconds(step, response.body?.timestamp, response),
    };
  }

  /** gPodder's MygPoClient._worker_proc: device, subscriptions, episodes. */
  async sync(caption: string): Promise<void> {
    expect(await this.updateDeviceSettings(caption, 'desktop')).toBe(true);
    await this.synchronizeSubscriptions();
    const downloaded = await this.downloadEpisodeActions(this.episodesSince);
    this.received.push(...downloaded.actions);
    this.episodesSince = downloaded.since;
    if (this.actions.length > 0) {
      await this.uploadEpisodeActions(this.actions);
      this.actions = [];
    }
  }

  subscribe(url: string) {
    this.feeds.add(url);
    this.remove = this.remove.filter((queued) => queued !== url);
    this.add.push(url);
  }

  unsubscribe(url: string) {
    this.feeds.delete(url);
    this.add = this.add.filter((queued) => queued !== url);
    this.remove.push(url);
  }

  /** Pulls, then pushes what is queued and takes the stored spelling of every rewritten URL. */
  private async synchronizeSubscriptions(): Promise<void> {
    const pulled = await this.pullSubscriptions(this.podcastsSince);
    this.podcastsSince = pulled.since;
    for (const url of pulled.add) this.feeds.add(url);
    for (const url of pulled.remove) this.feeds.delete(url);
    if (this.add.length === 0 && this.remove.length === 0) return;
    const pushed = await this.updateSubscriptions(this.add, this.remove);
    this.podcastsSince = pushed.since;
    this.updatedUrls = pushed.updateUrls;
    for (const [old, renamed] of pushed.updateUrls)
      if (renamed !== '' && this.feeds.delete(old)) this.feeds.add(renamed);
    this.add = [];
    this.remove = [];
  }
}
