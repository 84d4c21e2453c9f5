import { randomUUID } from 'node:crypto';
import { ApiResponse } from '../support/api-client';
import { poll } from '../support/until';
import { CastlogUnderTest, startCastlog, TestUser } from '../support/start-castlog';

/**
 * Real podcast apps syncing with castlog's gpodder.net face, replayed request by request as their
 * sources send them (method, path, query, headers, body bytes), each answer checked for what the
 * app's own parser needs. Every app below keeps its local state (subscribed feeds, queued changes,
 * stored timestamps) as the app does, so a second sync sends back the timestamp the first one
 * stored, and a second device of the same user sees the first one's changes.
 *
 * AntennaPod — net/sync/gpoddernet/.../GpodnetService.java over the OkHttp client of
 * net/common/.../AntennapodHttpClient.java (a java.net.CookieManager cookie jar,
 * ACCEPT_ORIGINAL_SERVER; User-Agent `AntennaPod/<version>` from UserAgentInterceptor;
 * BasicAuthorizationInterceptor only retries downloads, never these calls).
 *   Sign-in wizard (ui/preferences/.../GpodderAuthenticationFragment.java):
 *   1. login():          POST /api/2/auth/{user}/login.json, `Authorization: Basic` (UTF-8),
 *                        `Content-Type: plain/text; charset=utf-8`, empty body. checkStatusCode:
 *                        anything but 200 fails (401 "Wrong username or password").
 *   2. getDevices():     GET /api/2/devices/{user}.json, no Authorization: the session cookie
 *                        from 1 is all it sends. Parses a JSON array; per item getString("id"),
 *                        getString("caption"), getString("type"), getInt("subscriptions").
 *   3. configureDevice(): POST /api/2/devices/{user}/{device}.json,
 *                        `Content-Type: application/json; charset=utf-8`,
 *                        `{"caption":"AntennaPod on <model>","type":"mobile"}`; the device id is
 *                        the caption lower-cased with \W → `_` (generateDeviceId). Needs 200.
 *   Sync (net/sync/service/.../SyncService.java doWork: login, syncSubscriptions,
 *   syncEpisodeActions, logout — which sends nothing):
 *   4. login() again, as in 1.
 *   5. getSubscriptionChanges(lastSync): GET /api/2/subscriptions/{user}/{device}.json?since=<long>
 *      (0 the first time). readSubscriptionChangesFromJsonObject: getJSONArray("add"/"remove") of
 *      strings (`%3A` turned back into `:`), getLong("timestamp").
 *   6. uploadSubscriptionChanges(added, removed), when anything is queued (the first time: every
 *      local feed the download did not add): POST the same path, JSON `{"add":[…],"remove":[…]}`
 *      as org.json writes it (`/` escaped as `\/`). GpodnetUploadChangesResponse: getLong
 *      ("timestamp"), getJSONArray("update_urls") of pairs read with getString(0), getString(1).
 *      The timestamp of 6 (else of 5) is stored and sent as the next `since`.
 *   7. getEpisodeActionChanges(lastSync): GET /api/2/episodes/{user}.json?since=<long>.
 *      getLong("timestamp"), getJSONArray("actions"); each through EpisodeAction.readFromJsonObject
 *      (net/sync/service-interface/.../EpisodeAction.java): optString podcast, episode, action
 *      (upper-cased into the enum; unknown actions dropped), timestamp as
 *      `yyyy-MM-dd'T'HH:mm:ss` in UTC, guid, and for play optInt started/position/total (kept
 *      only when started ≥ 0, position > 0, total > 0).
 *   8. uploadEpisodeActions(queued), in bulks of 30 (UPLOAD_BULK_SIZE): POST /api/2/episodes/
 *      {user}.json, a JSON array of writeToJsonObject() (podcast, episode, guid, action, timestamp,
 *      and for play started, position, total) each with `device` put last.
 *      GpodnetEpisodeActionPostResponse: getLong("timestamp"), getJSONArray("update_urls").
 *      The first sync also uploads a play action for every played episode.
 *
 * Kasts — src/sync/gpodder/gpodder.cpp through Fetcher (src/fetcher.cpp: `User-Agent: Kasts/<v>
 * Syndication`, every POST `Content-Type: application/json`), a QNetworkAccessManager whose
 * default cookie jar keeps cookies; addAuthentication puts `Authorization: Basic` on every request.
 *   Sign-in (src/sync/sync.cpp):
 *   1. Sync::login → getDevices(): GET /api/2/devices/{user}.json (devicerequest.cpp: data.array(),
 *      value("id"/"caption"/"type").toString(), value("subscriptions").toInt()).
 *   2. registerNewDevice → updateDevice(): POST /api/2/devices/{user}/{id}.json,
 *      `{"caption":"Kasts on <host>","type":"<chosen>"}` (id suggested `kasts-<host>`).
 *   3. linkUpAllDevices → getSyncStatus(): GET /api/2/sync-devices/{user}.json (syncrequest.cpp:
 *      "synchronized" an array of arrays of ids, "not-synchronized" an array of ids), then
 *      updateSyncStatus(): POST the same path `{"synchronize":[[every id]],"stop-synchronize":[]}`
 *      (its answer is ignored), then for every device getSubscriptionChanges(0, device) and for
 *      every device uploadSubscriptionChanges(union of the add lists, [], device).
 *   Sync (src/sync/syncjob.cpp, doRegularSync):
 *   4. syncSubscriptions: GET /api/2/subscriptions/{user}/{device}.json?since=<stored> (0 the first
 *      time; subscriptionrequest.cpp: value("add"/"remove").toArray() of toString(), value
 *      ("timestamp").toInt() — a number, or it reads 0).
 *   5. uploadSubscriptions(local add, local remove), when either is non-empty (the first time:
 *      every local feed): POST the same path `{"add":[…],"remove":[…]}` (uploadsubscriptionrequest
 *      .cpp: update_urls pairs, timestamp toInt()).
 *   6. fetchRemoteEpisodeActions: GET /api/2/episodes/{user}.json?since=<stored>&aggregated=<true
 *      the first time, else false> (episodeactionrequest.cpp: actions[].guid, episode, podcast,
 *      device, action lower-cased, play's started/position/total toInt(), timestamp read with
 *      `yyyy-MM-dd'T'hh:mm:ss` after cutting at a `.`); fetched again while the answered timestamp
 *      is more than 10 s behind the clock and actions came.
 *   7. uploadEpisodeActions: only play actions, in batches of 30 (syncutils.h
 *      maxAmountEpisodeUploads): POST /api/2/episodes/{user}.json, `[{"podcast","episode","guid",
 *      "device","action","timestamp":"<ISO without Z>","started","position","total"}]`.
 *   updateDBTimestamp stores every timestamp it gets plus one second ("to avoid fetching our own
 *   previously sent updates"), and only when it is > 1: a change another device makes within that
 *   same second is never downloaded by Kasts. The test lets the clock pass that second before the
 *   other devices change anything, as a person would; with any server answering whole seconds
 *   Kasts has this gap.
 *   8. Sync::logout → logout(): POST /api/2/auth/{user}/logout.json, Basic, empty JSON-typed body.
 *
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

// ---------------------------------------------------------------------------------------------
// The wire: requests as the apps send them, a cookie jar as theirs keeps cookies.

interface StoredCookie {
  readonly value: string;
  readonly path: string;
  readonly secure: boolean;
  readonly httpOnly: boolean;
}

/** RFC 6265 in the part these apps rely on: a cookie without Path gets the request's directory as
 * its path, is sent only to paths under its path, never over plain HTTP when Secure, and goes away
 * when a later Set-Cookie expires it. java.net.CookieManager, QNetworkCookieJar and Python's
 * CookieJar all behave so for host-only cookies. */
class CookieJar {
  readonly cookies = new Map<string, StoredCookie>();

  receive(requestPath: string, setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      let path = defaultPath(requestPath);
      let secure = false;
      let httpOnly = false;
      let maxAge: number | undefined;
      let expires: number | undefined;
      for (const attribute of attributes) {
        const [key = '', ...rest] = attribute.split('=');
        const value = rest.join('=').trim();
        switch (key.trim().toLowerCase()) {
          case 'path':
            if (value.startsWith('/')) path = value;
            break;
          case 'secure':
            secure = true;
            break;
          case 'httponly':
            httpOnly = true;
            break;
          case 'max-age':
            maxAge = Number(value);
            break;
          case 'expires':
            expires = Date.parse(value);
            break;
          default:
            break;
        }
      }
      const expired = maxAge !== undefined ? !(maxAge > 0) : expires !== undefined && expires <= Date.now();
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, { value: pair.slice(eq + 1).trim(), path, secure, httpOnly });
    }
  }

  /** The Cookie header for a request to `requestPath` over plain HTTP. */
  header(requestPath: string): string | undefined {
    const sent = [...this.cookies]
      .filter(([, cookie]) => !cookie.secure && pathMatches(requestPath, cookie.path))
      .map(([name, cookie]) => `${name}=${cookie.value}`);
    return sent.length === 0 ? undefined : sent.join('; ');
  }
}

const pathOf = (target: string) => target.split('?')[0] ?? '/';
const defaultPath = (target: string) => {
  const path = pathOf(target);
  const slash = path.lastIndexOf('/');
  return !path.startsWith('/') || slash <= 0 ? '/' : path.slice(0, slash);
};
const pathMatches = (target: string, cookiePath: string) => {
  const path = pathOf(target);
  return (
    path === cookiePath ||
    (path.startsWith(cookiePath) && (cookiePath.endsWith('/') || path[cookiePath.length] === '/'))
  );
};

/** One app's HTTP client: its User-Agent, its cookie jar, every exchange logged for messages. */
class Wire {
  readonly jar = new CookieJar();
  readonly exchanges: string[] = [];

  constructor(
    private readonly app: CastlogUnderTest,
    private readonly userAgent: string,
  ) {}

  async send(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<ApiResponse> {
    const all: Record<string, string> = { 'user-agent': this.userAgent, ...headers };
    const cookie = this.jar.header(path);
    if (cookie !== undefined) all.cookie = cookie;
    const response = await this.app.anonymous.request(method, path, { rawBody: body, headers: all });
    this.jar.receive(path, response.headers.getSetCookie());
    this.exchanges.push(`${method} ${path} → ${response.status} ${response.text.slice(0, 200)}`);
    return response;
  }
}

const basicOf = (user: TestUser) =>
  `Basic ${Buffer.from(`${user.name}:${user.password}`, 'utf8').toString('base64')}`;

/** Fails with the step, the status and the body when the status is not the one the app needs. */
function expectStatus(step: string, response: ApiResponse, status: number | ((s: number) => boolean)) {
  const ok = typeof status === 'number' ? response.status === status : status(response.status);
  if (!ok)
    throw new Error(
      `${step}: status ${response.status}, the app needs ${typeof status === 'number' ? status : 'a 2xx'}\n${response.text.slice(0, 500)}`,
    );
}

/** A parse failure, as the app would hit it. */
function parseFail(step: string, why: string, response: ApiResponse): never {
  throw new Error(`${step}: ${why}\nbody: ${response.text.slice(0, 500)}`);
}

/** JSON the way org.json on Android writes it: compact, `/` escaped. */
const androidJson = (value: unknown) => JSON.stringify(value).replace(/\//g, '\\/');
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

/** gpodder.net timestamps: whole Unix seconds (not milliseconds), once the user has changed anything. */
function expectUnixSeconds(step: string, value: unknown, response: ApiResponse): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    parseFail(step, `timestamp ${JSON.stringify(value)} is not an integer`, response);
  if (value < 1_600_000_000 || value > 9_999_999_999)
    parseFail(step, `timestamp ${value} is not Unix seconds`, response);
  return value;
}

const GPODDER_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const gpodderTime = (ms: number) => new Date(ms).toISOString().slice(0, 19);

const strings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** update_urls as AntennaPod (getJSONArray(i).getString(0/1)), Kasts and mygpoclient read it. */
function updateUrls(step: string, response: ApiResponse): [string, string][] {
  const pairs: unknown = response.body?.update_urls;
  if (!Array.isArray(pairs)) parseFail(step, 'update_urls is not a list', response);
  for (const pair of pairs)
    if (!Array.isArray(pair) || pair.length !== 2 || !strings(pair))
      parseFail(step, `update_urls item ${JSON.stringify(pair)} is not a pair of strings`, response);
  return pairs as [string, string][];
}

/** An episode action as the apps hold one. */
interface Action {
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
const sameAction = (a: Action) => ({
  podcast: a.podcast,
  episode: a.episode,
  action: a.action,
  timestamp: a.timestamp,
  ...(a.action === 'play' ? { started: a.started, position: a.position, total: a.total } : {}),
});

/** Checks the actions list every app reads: podcast, episode, action strings, the timestamp in
 * gpodder's format, play fields integers, and no play fields on other actions (mygpoclient's
 * EpisodeAction refuses them). */
function checkActions(step: string, response: ApiResponse): Action[] {
  const actions: unknown = response.body?.actions;
  if (!Array.isArray(actions)) parseFail(step, 'actions is not a list', response);
  for (const action of actions as Record<string, unknown>[]) {
    if (typeof action !== 'object' || action === null)
      parseFail(step, 'an action is not an object', response);
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
  return actions as Action[];
}

/** The user's subscribed feeds, through the simple API with Basic. */
async function serverFeeds(app: CastlogUnderTest, user: TestUser): Promise<string[]> {
  const response = await app.anonymous.request('GET', `/subscriptions/${user.name}.json`, {
    headers: { authorization: basicOf(user) },
  });
  expectStatus('GET /subscriptions/{user}.json', response, 200);
  if (!strings(response.body)) parseFail('simple API', 'not a list of URLs', response);
  return [...response.body].sort();
}

const sorted = (values: Iterable<string>) => [...values].sort();

// ---------------------------------------------------------------------------------------------
// AntennaPod.

class AntennaPod {
  readonly wire: Wire;
  /** DBReader.getFeedListDownloadUrls: the phone's subscriptions. */
  readonly feeds = new Set<string>();
  /** SynchronizationQueueStorage. */
  queuedAdded: string[] = [];
  queuedRemoved: string[] = [];
  queuedActions: Action[] = [];
  /** Played episodes, uploaded as play actions by the first sync. */
  played: Action[] = [];
  /** SynchronizationSettings' stored timestamps. */
  lastSubscriptionSync = 0;
  lastEpisodeSync = 0;
  /** Remote actions processEpisodeActions received. */
  readonly received: Action[] = [];

  constructor(
    app: CastlogUnderTest,
    readonly user: TestUser,
    readonly caption: string,
  ) {
    this.wire = new Wire(app, 'AntennaPod/3.7.0');
  }

  /** GpodderAuthenticationFragment.generateDeviceId. */
  get deviceId(): string {
    return this.caption.replace(/\W/g, '_').toLowerCase();
  }

  private json(method: string, path: string, body: unknown) {
    return this.wire.send(
      method,
      path,
      { 'content-type': 'application/json; charset=utf-8' },
      androidJson(body),
    );
  }

  async login(): Promise<void> {
    const response = await this.wire.send(
      'POST',
      `/api/2/auth/${this.user.name}/login.json`,
      { authorization: basicOf(this.user), 'content-type': 'plain/text; charset=utf-8' },
      '',
    );
    expectStatus('AntennaPod login', response, 200);
  }

  async getDevices(): Promise<{ id: string; caption: string; type: string; subscriptions: number }[]> {
    const step = 'AntennaPod getDevices';
    const response = await this.wire.send('GET', `/api/2/devices/${this.user.name}.json`);
    expectStatus(step, response, 200);
    if (!Array.isArray(response.body)) parseFail(step, 'not a JSON array', response);
    for (const device of response.body) {
      for (const field of ['id', 'caption', 'type'])
        if (typeof device?.[field] !== 'string') parseFail(step, `getString("${field}") fails`, response);
      if (!Number.isSafeInteger(device.subscriptions))
        parseFail(step, 'getInt("subscriptions") is not an integer', response);
    }
    return response.body;
  }

  async configureDevice(type: string): Promise<void> {
    const response = await this.json('POST', `/api/2/devices/${this.user.name}/${this.deviceId}.json`, {
      caption: this.caption,
      type,
    });
    expectStatus('AntennaPod configureDevice', response, 200);
  }

  async getSubscriptionChanges(since: number) {
    const step = `AntennaPod getSubscriptionChanges(${since})`;
    const response = await this.wire.send(
      'GET',
      `/api/2/subscriptions/${this.user.name}/${this.deviceId}.json?since=${since}`,
    );
    expectStatus(step, response, 200);
    const { add, remove, timestamp } = response.body ?? {};
    if (!strings(add) || !strings(remove))
      parseFail(step, 'add and remove are not lists of strings', response);
    return {
      added: add.map((url) => url.replace(/%3A/g, ':')),
      removed: remove.map((url) => url.replace(/%3A/g, ':')),
      timestamp: expectUnixSeconds(step, timestamp, response),
    };
  }

  async uploadSubscriptionChanges(added: string[], removed: string[]) {
    const step = 'AntennaPod uploadSubscriptionChanges';
    const response = await this.json('POST', `/api/2/subscriptions/${this.user.name}/${this.deviceId}.json`, {
      add: added,
      remove: removed,
    });
    expectStatus(step, response, 200);
    return {
      timestamp: expectUnixSeconds(step, response.body?.timestamp, response),
      updatedUrls: updateUrls(step, response),
    };
  }

  async getEpisodeActionChanges(since: number) {
    const step = `AntennaPod getEpisodeActionChanges(${since})`;
    const response = await this.wire.send('GET', `/api/2/episodes/${this.user.name}.json?since=${since}`);
    expectStatus(step, response, 200);
    const timestamp = expectUnixSeconds(step, response.body?.timestamp, response);
    const actions = checkActions(step, response);
    return { actions, timestamp };
  }

  async uploadEpisodeActions(actions: Action[]): Promise<number> {
    let timestamp = 0;
    for (let from = 0; from < actions.length; from += 30) {
      const step = 'AntennaPod uploadEpisodeActions';
      const list = actions.slice(from, from + 30).map((action) => ({
        podcast: action.podcast,
        episode: action.episode,
        ...(action.guid === undefined ? {} : { guid: action.guid }),
        action: action.action,
        timestamp: action.timestamp,
        ...(action.action === 'play'
          ? { started: action.started, position: action.position, total: action.total }
          : {}),
        device: this.deviceId,
      }));
      const response = await this.json('POST', `/api/2/episodes/${this.user.name}.json`, list);
      expectStatus(step, response, 200);
      timestamp = expectUnixSeconds(step, response.body?.timestamp, response);
      updateUrls(step, response);
    }
    return timestamp;
  }

  /** The sign-in wizard: login, the device list, a new device. */
  async signIn(): Promise<{ id: string; caption: string; type: string; subscriptions: number }[]> {
    await this.login();
    const devices = await this.getDevices();
    expect(devices.map((device) => device.id)).not.toContain(this.deviceId);
    await this.configureDevice('mobile');
    return devices;
  }

  /** SyncService.doWork. */
  async sync(): Promise<void> {
    await this.login();
    await this.syncSubscriptions();
    await this.syncEpisodeActions();
  }

  private async syncSubscriptions(): Promise<void> {
    const lastSync = this.lastSubscriptionSync;
    const localSubscriptions = [...this.feeds];
    const changes = await this.getSubscriptionChanges(lastSync);
    let newTimeStamp = changes.timestamp;
    for (const url of changes.added)
      if (url.startsWith('http') && !this.feeds.has(url) && !this.queuedRemoved.includes(url))
        this.feeds.add(url);
    for (const url of changes.removed) if (!this.queuedAdded.includes(url)) this.feeds.delete(url);
    if (lastSync === 0) {
      this.queuedAdded = localSubscriptions.filter((url) => !changes.added.includes(url));
      this.queuedRemoved = this.queuedRemoved.filter((url) => !changes.removed.includes(url));
    }
    if (this.queuedAdded.length > 0 || this.queuedRemoved.length > 0) {
      const response = await this.uploadSubscriptionChanges(this.queuedAdded, this.queuedRemoved);
      this.queuedAdded = [];
      this.queuedRemoved = [];
      newTimeStamp = response.timestamp;
    }
    this.lastSubscriptionSync = newTimeStamp;
  }

  private async syncEpisodeActions(): Promise<void> {
    const lastSync = this.lastEpisodeSync;
    const remote = await this.getEpisodeActionChanges(lastSync);
    let newTimeStamp = remote.timestamp;
    this.received.push(...remote.actions);
    const queued = [...this.queuedActions, ...(lastSync === 0 ? this.played : [])];
    if (queued.length > 0) {
      newTimeStamp = await this.uploadEpisodeActions(queued);
      this.queuedActions = [];
    }
    this.lastEpisodeSync = newTimeStamp;
  }

  subscribe(url: string) {
    this.feeds.add(url);
    this.queuedRemoved = this.queuedRemoved.filter((queued) => queued !== url);
    this.queuedAdded.push(url);
  }

  unsubscribe(url: string) {
    this.feeds.delete(url);
    this.queuedAdded = this.queuedAdded.filter((queued) => queued !== url);
    this.queuedRemoved.push(url);
  }
}

// ---------------------------------------------------------------------------------------------
// Kasts.

class Kasts {
  readonly wire: Wire;
  /** The Feeds table. */
  readonly feeds = new Set<string>();
  /** The FeedActions table. */
  feedActions: { url: string; action: 'add' | 'remove' }[] = [];
  /** The EpisodeActions table. */
  episodeActions: Action[] = [];
  /** The SyncTimestamps table, as updateDBTimestamp writes it (the answered timestamp + 1). */
  subscriptionTimestamp: number | undefined;
  episodeTimestamp: number | undefined;
  readonly received: Action[] = [];
  devices: { id: string; caption: string; type: string; subscriptions: number }[] = [];

  constructor(
    app: CastlogUnderTest,
    readonly user: TestUser,
    readonly host: string,
  ) {
    this.wire = new Wire(app, 'Kasts/25.04.0 Syndication');
  }

  /** Sync::suggestedDevice. */
  get deviceId(): string {
    return `kasts-${this.host}`;
  }

  private get(path: string) {
    return this.wire.send('GET', path, { authorization: basicOf(this.user) });
  }

  private post(path: string, body: string) {
    return this.wire.send(
      'POST',
      path,
      { authorization: basicOf(this.user), 'content-type': 'application/json' },
      body,
    );
  }

  /** QNetworkReply reports an error for any status outside 2xx. */
  private ok(step: string, response: ApiResponse) {
    expectStatus(step, response, (status) => status >= 200 && status < 300);
  }

  async getDevices() {
    const step = 'Kasts getDevices';
    const response = await this.get(`/api/2/devices/${this.user.name}.json`);
    this.ok(step, response);
    if (!Array.isArray(response.body)) parseFail(step, 'data.array() is empty: not a JSON array', response);
    for (const device of response.body) {
      for (const field of ['id', 'caption', 'type'])
        if (typeof device?.[field] !== 'string') parseFail(step, `${field}.toString() reads ""`, response);
      if (!Number.isSafeInteger(device.subscriptions))
        parseFail(step, 'subscriptions.toInt() reads 0', response);
    }
    return response.body as { id: string; caption: string; type: string; subscriptions: number }[];
  }

  async updateDevice(caption: string, type: string) {
    const response = await this.post(
      `/api/2/devices/${this.user.name}/${this.deviceId}.json`,
      JSON.stringify({ caption, type }),
    );
    this.ok('Kasts updateDevice', response);
  }

  async getSyncStatus(): Promise<{ synced: string[][]; unsynced: string[] }> {
    const step = 'Kasts getSyncStatus';
    const response = await this.get(`/api/2/sync-devices/${this.user.name}.json`);
    this.ok(step, response);
    const synced: unknown = response.body?.synchronized;
    const unsynced: unknown = response.body?.['not-synchronized'];
    if (!Array.isArray(synced) || !synced.every(strings) || !strings(unsynced))
      parseFail(step, 'synchronized is not a list of lists of ids, or not-synchronized a list', response);
    return { synced: synced as string[][], unsynced };
  }

  async updateSyncStatus(groups: string[][], unsynced: string[]) {
    const response = await this.post(
      `/api/2/sync-devices/${this.user.name}.json`,
      JSON.stringify({ synchronize: groups, 'stop-synchronize': unsynced }),
    );
    // Kasts ignores this answer; castlog accepts the request (the contract: POST accepted).
    this.ok('Kasts updateSyncStatus', response);
  }

  async getSubscriptionChanges(since: number, device: string) {
    const step = `Kasts getSubscriptionChanges(${since}, ${device})`;
    const response = await this.get(`/api/2/subscriptions/${this.user.name}/${device}.json?since=${since}`);
    this.ok(step, response);
    const { add, remove, timestamp } = response.body ?? {};
    if (!strings(add) || !strings(remove))
      parseFail(step, 'add and remove are not lists of strings', response);
    // GenericRequest::cleanupUrl percent-decodes what gpodder.net sends.
    return {
      add: add.map((url) => decodeURIComponent(url)),
      remove: remove.map((url) => decodeURIComponent(url)),
      timestamp: expectUnixSeconds(step, timestamp, response),
    };
  }

  async uploadSubscriptionChanges(add: string[], remove: string[], device: string) {
    const step = 'Kasts uploadSubscriptionChanges';
    const response = await this.post(
      `/api/2/subscriptions/${this.user.name}/${device}.json`,
      JSON.stringify({ add, remove }),
    );
    this.ok(step, response);
    return {
      updateUrls: updateUrls(step, response),
      timestamp: expectUnixSeconds(step, response.body?.timestamp, response),
    };
  }

  async getEpisodeActions(since: number, aggregated: boolean) {
    const step = `Kasts getEpisodeActions(${since}, ${aggregated})`;
    const response = await this.get(
      `/api/2/episodes/${this.user.name}.json?since=${since}&aggregated=${aggregated ? 'true' : 'false'}`,
    );
    this.ok(step, response);
    const actions = checkActions(step, response);
    return { actions, timestamp: expectUnixSeconds(step, response.body?.timestamp, response) };
  }

  async uploadEpisodeActions(actions: Action[]): Promise<number> {
    const step = 'Kasts uploadEpisodeActions';
    const list = actions.map((action) => ({
      podcast: action.podcast,
      episode: action.episode,
      guid: action.guid ?? '',
      device: this.deviceId,
      action: action.action,
      timestamp: action.timestamp,
      ...(action.action === 'play'
        ? { started: action.started, position: action.position, total: action.total }
        : {}),
    }));
    const response = await this.post(`/api/2/episodes/${this.user.name}.json`, JSON.stringify(list));
    this.ok(step, response);
    return expectUnixSeconds(step, response.body?.timestamp, response);
  }

  async logout() {
    const response = await this.post(`/api/2/auth/${this.user.name}/logout.json`, '');
    this.ok('Kasts logout', response);
  }

  /** Sync::login, registerNewDevice and linkUpAllDevices. */
  async signIn(caption: string, type: string): Promise<void> {
    this.devices = await this.getDevices();
    await this.updateDevice(caption, type);
    const status = await this.getSyncStatus();
    const all = new Set([...status.synced.flat(), ...status.unsynced]);
    await this.updateSyncStatus([[...all]], []);
    const union: string[] = [];
    for (const device of all) union.push(...(await this.getSubscriptionChanges(0, device)).add);
    for (const device of all) await this.uploadSubscriptionChanges(union, [], device);
  }

  /** The largest timestamp castlog answered this app. */
  lastAnswered = 0;

  /** updateDBTimestamp. */
  private stored(timestamp: number, previous: number | undefined) {
    this.lastAnswered = Math.max(this.lastAnswered, timestamp);
    return timestamp > 1 ? timestamp + 1 : previous;
  }

  /** SyncJob::doRegularSync. */
  async sync(): Promise<void> {
    // syncSubscriptions
    const since = this.subscriptionTimestamp ?? 0;
    let localAdd: string[];
    let localRemove: string[];
    if (since === 0) {
      localAdd = [...this.feeds];
      localRemove = [];
    } else {
      localAdd = this.feedActions.filter((a) => a.action === 'add').map((a) => a.url);
      localRemove = this.feedActions.filter((a) => a.action === 'remove').map((a) => a.url);
    }
    [localAdd, localRemove] = [
      [...new Set(localAdd)].filter((url) => !localRemove.includes(url)),
      [...new Set(localRemove)].filter((url) => !localAdd.includes(url)),
    ];
    const remote = await this.getSubscriptionChanges(since, this.deviceId);
    for (const url of remote.add) this.feeds.add(url);
    for (const url of remote.remove) this.feeds.delete(url);
    this.subscriptionTimestamp = this.stored(remote.timestamp, this.subscriptionTimestamp);
    if (localAdd.length > 0 || localRemove.length > 0) {
      const uploaded = await this.uploadSubscriptionChanges(localAdd, localRemove, this.deviceId);
      this.subscriptionTimestamp = this.stored(uploaded.timestamp, this.subscriptionTimestamp);
    }
    this.feedActions = [];

    // fetchRemoteEpisodeActions, again while the timestamp is far behind and actions come
    for (let round = 0; ; round += 1) {
      const episodeSince = this.episodeTimestamp ?? 0;
      const fetched = await this.getEpisodeActions(episodeSince, episodeSince === 0);
      this.received.push(...fetched.actions);
      this.episodeTimestamp = this.stored(fetched.timestamp, this.episodeTimestamp);
      const now = Math.floor(Date.now() / 1000);
      if (fetched.timestamp > now - 10 || fetched.actions.length === 0) break;
      if (round >= 4) throw new Error('Kasts keeps fetching episode actions: the timestamp never catches up');
    }

    // syncEpisodeStates → uploadEpisodeActions: play actions only, 30 at a time
    const plays = this.episodeActions.filter((action) => action.action === 'play');
    for (let from = 0; from < plays.length; from += 30) {
      const timestamp = await this.uploadEpisodeActions(plays.slice(from, from + 30));
      if (from + 30 >= plays.length) this.episodeTimestamp = this.stored(timestamp, this.episodeTimestamp);
    }
    this.episodeActions = [];
  }

  subscribe(url: string) {
    this.feeds.add(url);
    this.feedActions.push({ url, action: 'add' });
  }

  unsubscribe(url: string) {
    this.feeds.delete(url);
    this.feedActions.push({ url, action: 'remove' });
  }
}

// ---------------------------------------------------------------------------------------------
// mygpoclient's raw HTTP (what gPodder desktop sends through it).

const PYTHON_REALM = /(?:^|,)[ \t]*([^ \t,]+)[ \t]+realm=(["']?)([^"']*)\2/i;

class Mygpo {
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

  async updateDeviceSettings(caption: string, type: string): Promise<boolean> {
    const { json } = await this.request('POST', `/api/2/devices/${this.user.name}/${this.deviceId}.json`, {
      caption,
      type,
    });
    return json === null;
  }

  async getDevices() {
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
    return json as { id: string; caption: string; type: string; subscriptions: number }[];
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
    const pulled = await this.pullSubscriptions(this.podcastsSince);
    this.podcastsSince = pulled.since;
    for (const url of pulled.add) this.feeds.add(url);
    for (const url of pulled.remove) this.feeds.delete(url);
    if (this.add.length > 0 || this.remove.length > 0) {
      const pushed = await this.updateSubscriptions(this.add, this.remove);
      this.podcastsSince = pushed.since;
      this.updatedUrls = pushed.updateUrls;
      for (const [old, renamed] of pushed.updateUrls)
        if (renamed !== '' && this.feeds.delete(old)) this.feeds.add(renamed);
      this.add = [];
      this.remove = [];
    }
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
}

// ---------------------------------------------------------------------------------------------

const feedUrl = (label: string) => `https://${label}.example.com/${randomUUID()}/feed.xml`;
const episodeUrl = (feed: string, n: number) => feed.replace(/feed\.xml$/, `episode-${n}.mp3`);
/** A wall-clock instant (an action's own timestamp), some minutes ago. */
const minutesAgo = (minutes: number) => gpodderTime(Date.now() - minutes * 60_000);
const play = (podcast: string, n: number, position: number, total = 3600): Action => ({
  podcast,
  episode: episodeUrl(podcast, n),
  guid: `${podcast}#${n}`,
  action: 'play',
  timestamp: minutesAgo(10 - n / 10),
  started: Math.max(0, position - 60),
  position,
  total,
});

/** Polls the wall clock until the second after `timestamp` has begun, so that what another device
 * changes next lands at or after `timestamp + 1`, the `since` Kasts sends (see above). */
const afterSecond = (timestamp: number) =>
  poll(`the clock to pass second ${timestamp}`, () => Date.now() >= (timestamp + 1) * 1000, {
    timeoutMs: 5_000,
    everyMs: 50,
  });

describe('podcast apps syncing through the gpodder.net face, request by request', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log: 'postgres' })));
  afterAll(() => app?.close());

  describe('AntennaPod (GpodnetService over OkHttp: one Basic login, then its session cookie)', () => {
    let user: TestUser;
    let phone: AntennaPod;
    let tablet: AntennaPod;
    const [A, B, C] = [feedUrl('antenna-a'), feedUrl('antenna-b'), feedUrl('antenna-c')];
    const playedA1 = play(A, 1, 1800, 1800);
    const playB7 = play(B, 7, 754, 3120);
    const deleteB6: Action = {
      podcast: B,
      episode: episodeUrl(B, 6),
      guid: 'b-6',
      action: 'delete',
      timestamp: minutesAgo(4),
    };
    const playA2 = play(A, 2, 42, 2400);

    beforeAll(async () => {
      user = await app.freshUser();
      phone = new AntennaPod(app, user, 'AntennaPod on Pixel 7');
      tablet = new AntennaPod(app, user, 'AntennaPod on Galaxy Tab S9');
    });

    it('signs in: the login sets an HttpOnly session cookie that alone carries the device list and the new device', async () => {
      expect(await phone.signIn()).toEqual([]);
      expect(phone.wire.jar.cookies.get('sessionid')).toEqual(
        expect.objectContaining({ httpOnly: true, secure: false }),
      );
      // Everything after the login went out with the cookie only.
      expect(await phone.getDevices()).toEqual([
        { id: 'antennapod_on_pixel_7', caption: 'AntennaPod on Pixel 7', type: 'mobile', subscriptions: 0 },
      ]);
    });

    it('a wrong password fails the login with 401, and without a session the next call is refused', async () => {
      const stranger = new AntennaPod(
        app,
        { ...user, password: `${user.password}x` },
        'AntennaPod on Pixel 7',
      );
      const login = await stranger.wire.send(
        'POST',
        `/api/2/auth/${user.name}/login.json`,
        { authorization: basicOf(stranger.user), 'content-type': 'plain/text; charset=utf-8' },
        '',
      );
      expect(login.status).toBe(401);
      expect(login.body).toEqual({ code: '401', message: 'User not authorized' });
      expect(stranger.wire.jar.cookies.has('sessionid')).toBe(false);
      expect((await stranger.wire.send('GET', `/api/2/devices/${user.name}.json`)).status).toBe(401);
    });

    it('first sync: downloads since 0, uploads every local feed, uploads the queued and the played episodes', async () => {
      phone.feeds.add(A);
      phone.feeds.add(B);
      phone.played = [playedA1];
      phone.queuedActions = [playB7, deleteB6];
      await phone.sync();
      expect(phone.wire.exchanges).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^GET \/api\/2\/subscriptions\/\S+\/antennapod_on_pixel_7\.json\?since=0 → 200/,
          ),
          expect.stringMatching(/^GET \/api\/2\/episodes\/\S+\.json\?since=0 → 200/),
        ]),
      );
      expect(phone.lastSubscriptionSync).toBeGreaterThan(0);
      expect(phone.lastEpisodeSync).toBeGreaterThan(0);
      expect(sorted(phone.feeds)).toEqual(sorted([A, B]));
      expect(await serverFeeds(app, user)).toEqual(sorted([A, B]));
      // The device counts the user's subscriptions now.
      expect((await phone.getDevices()).find((device) => device.id === phone.deviceId)?.subscriptions).toBe(
        2,
      );
    });

    it("a second device of the same user gets the first one's feeds and episode actions, and adds its own", async () => {
      tablet.feeds.add(C);
      const devices = await tablet.signIn();
      expect(devices.map((device) => device.id)).toEqual([phone.deviceId]);
      await tablet.sync();
      expect(sorted(tablet.feeds)).toEqual(sorted([A, B, C]));
      expect(tablet.received.map(sameAction)).toEqual(
        expect.arrayContaining([playedA1, playB7, deleteB6].map(sameAction)),
      );
      expect(tablet.received.find((action) => action.episode === playB7.episode)).toEqual(
        expect.objectContaining({ guid: playB7.guid, device: phone.deviceId }),
      );
      expect(await serverFeeds(app, user)).toEqual(sorted([A, B, C]));
    });

    it("second sync: sends back the stored timestamps and sees the other device's changes, a removal included", async () => {
      const since = { subscriptions: phone.lastSubscriptionSync, episodes: phone.lastEpisodeSync };
      tablet.unsubscribe(B);
      tablet.queuedActions = [playA2];
      await tablet.sync();
      expect(sorted(tablet.feeds)).toEqual(sorted([A, C]));

      const received = phone.received.length;
      await phone.sync();
      expect(phone.wire.exchanges).toEqual(
        expect.arrayContaining([
          expect.stringContaining(
            `GET /api/2/subscriptions/${user.name}/${phone.deviceId}.json?since=${since.subscriptions} → 200`,
          ),
          expect.stringContaining(`GET /api/2/episodes/${user.name}.json?since=${since.episodes} → 200`),
        ]),
      );
      expect(sorted(phone.feeds)).toEqual(sorted([A, C]));
      expect(phone.received.slice(received).map(sameAction)).toContainEqual(sameAction(playA2));
      expect(phone.lastSubscriptionSync).toBeGreaterThanOrEqual(since.subscriptions);
      expect(await serverFeeds(app, user)).toEqual(sorted([A, C]));
    });
  });

  describe('Kasts (gpodder.cpp: Basic on every request, JSON-typed posts, timestamps stored plus one)', () => {
    let user: TestUser;
    let laptop: Kasts;
    let desktop: Kasts;
    const [D, E, F] = [feedUrl('kasts-d'), feedUrl('kasts-e'), feedUrl('kasts-f')];
    const playD1 = play(D, 1, 300);
    const downloadD2: Action = {
      podcast: D,
      episode: episodeUrl(D, 2),
      guid: 'd-2',
      action: 'download',
      timestamp: minutesAgo(3),
    };
    const playF1 = play(F, 1, 95);

    beforeAll(async () => {
      user = await app.freshUser();
      laptop = new Kasts(app, user, 'thinkpad');
      desktop = new Kasts(app, user, 'workstation');
    });

    it('signs in: the device list, a new device, every device linked, the union of their subscriptions uploaded', async () => {
      laptop.feeds.add(D);
      laptop.feeds.add(E);
      await laptop.signIn('Kasts on thinkpad', 'laptop');
      expect(laptop.devices).toEqual([]);
      expect(await laptop.getDevices()).toEqual([
        { id: 'kasts-thinkpad', caption: 'Kasts on thinkpad', type: 'laptop', subscriptions: 0 },
      ]);
      expect(await laptop.getSyncStatus()).toEqual({ synced: [['kasts-thinkpad']], unsynced: [] });
    });

    it('a server address entered with a trailing slash: the doubled slash in every path reaches the same routes', async () => {
      // Kasts keeps `https://host/` as entered and appends `/api/2/…` to it.
      const devices = async (base: string) => {
        const response = await fetch(`${base}/api/2/devices/${user.name}.json`, {
          headers: { authorization: basicOf(user), 'user-agent': 'Kasts/25.04.0 Syndication' },
        });
        return { status: response.status, body: await response.json() };
      };
      const doubled = await devices(`${app.url}/`);
      expect(doubled.status).toBe(200);
      expect(doubled).toEqual(await devices(app.url));
    });

    it('first sync: since 0 with aggregated=true, every local feed uploaded, only play actions uploaded', async () => {
      laptop.episodeActions = [playD1, downloadD2];
      await laptop.sync();
      expect(laptop.wire.exchanges).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^GET \/api\/2\/subscriptions\/\S+\/kasts-thinkpad\.json\?since=0 → 200/),
          expect.stringMatching(/^GET \/api\/2\/episodes\/\S+\.json\?since=0&aggregated=true → 200/),
        ]),
      );
      expect(await serverFeeds(app, user)).toEqual(sorted([D, E]));
      expect(laptop.subscriptionTimestamp).toBeGreaterThan(1_600_000_000);
      expect(laptop.episodeTimestamp).toBeGreaterThan(1_600_000_000);
    });

    it("a second device of the same user links up, gets the first one's feeds and plays, and changes some", async () => {
      // Kasts downloads from its stored timestamp + 1: the other device acts in a later second.
      await afterSecond(laptop.lastAnswered);
      desktop.feeds.add(F);
      await desktop.signIn('Kasts on workstation', 'desktop');
      expect(desktop.devices.map((device) => device.id)).toEqual(['kasts-thinkpad']);
      const status = await desktop.getSyncStatus();
      expect(status.unsynced).toEqual([]);
      expect(status.synced.map((group) => sorted(group))).toEqual([['kasts-thinkpad', 'kasts-workstation']]);

      await desktop.sync();
      expect(sorted(desktop.feeds)).toEqual(sorted([D, E, F]));
      expect(desktop.received.map(sameAction)).toContainEqual(sameAction(playD1));
      // Kasts uploads play actions only.
      expect(desktop.received.map((action) => action.episode)).not.toContain(downloadD2.episode);

      desktop.unsubscribe(E);
      desktop.episodeActions = [playF1];
      await desktop.sync();
      expect(await serverFeeds(app, user)).toEqual(sorted([D, F]));
    });

    it("second sync: since is the stored timestamp (+1), aggregated=false, and brings the other device's removal and play", async () => {
      const since = laptop.subscriptionTimestamp;
      const episodesSince = laptop.episodeTimestamp;
      await laptop.sync();
      expect(laptop.wire.exchanges).toEqual(
        expect.arrayContaining([
          expect.stringContaining(
            `GET /api/2/subscriptions/${user.name}/kasts-thinkpad.json?since=${since} → 200`,
          ),
          expect.stringContaining(
            `GET /api/2/episodes/${user.name}.json?since=${episodesSince}&aggregated=false → 200`,
          ),
        ]),
      );
      expect(sorted(laptop.feeds)).toEqual(sorted([D, F]));
      expect(laptop.received.map(sameAction)).toContainEqual(sameAction(playF1));
    });

    it('logs out: the session its cookie carried ends', async () => {
      // Responses to Basic requests set the session cookie, which Kasts' cookie jar sends back.
      const cookie = laptop.wire.jar.header(`/api/2/devices/${user.name}.json`);
      expect(cookie).toMatch(/(^|; )sessionid=/);
      const before = await app.anonymous.request('GET', `/api/2/devices/${user.name}.json`, {
        headers: { cookie: cookie! },
      });
      expect(before.status).toBe(200);
      await laptop.logout();
      const after = await app.anonymous.request('GET', `/api/2/devices/${user.name}.json`, {
        headers: { cookie: cookie! },
      });
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
    });
  });

  describe('mygpoclient (raw HTTP: no credentials until challenged, then the session cookie)', () => {
    let user: TestUser;
    let desktop: Mygpo;
    let laptop: Mygpo;
    const [G, H, I, J] = [feedUrl('mygpo-g'), feedUrl('mygpo-h'), feedUrl('mygpo-i'), feedUrl('mygpo-j')];
    const playG1 = { ...play(G, 1, 1200), device: 'gpodder-desktop' };
    const downloadG2: Action = {
      podcast: G,
      episode: G.replace(/feed\.xml$/, 'épisode-2.mp3'),
      action: 'download',
      device: 'gpodder-desktop',
      timestamp: minutesAgo(2),
    };

    beforeAll(async () => {
      user = await app.freshUser();
      desktop = new Mygpo(app, user, 'gpodder-desktop');
      laptop = new Mygpo(app, user, 'gpodder-laptop');
    });

    it('answers the first request with a Basic challenge; the retry sets the session cookie and nothing later is challenged', async () => {
      desktop.subscribe(G);
      desktop.subscribe(H);
      desktop.actions = [playG1, downloadG2];
      await desktop.sync('gPodder on desktop');
      const [first, second] = desktop.wire.exchanges;
      expect(first).toMatch(/^POST \/api\/2\/devices\/\S+\/gpodder-desktop\.json → 401/);
      expect(second).toMatch(/^POST \/api\/2\/devices\/\S+\/gpodder-desktop\.json → 200 $/);
      expect(desktop.wire.jar.cookies.has('sessionid')).toBe(true);
      expect(await desktop.getDevices()).toEqual([
        { id: 'gpodder-desktop', caption: 'gPodder on desktop', type: 'desktop', subscriptions: 2 },
      ]);
      // One challenge for the whole sync: urllib's password manager would give up after three.
      expect(desktop.challenges).toBe(1);
      expect(desktop.wire.exchanges.length).toBeGreaterThan(4);
      expect(await serverFeeds(app, user)).toEqual(sorted([G, H]));
    });

    it("a second device pulls the first one's feeds and actions; its other spelling of a URL and a bad URL come back in update_urls", async () => {
      const otherSpelling = G.replace('https://mygpo-g.example.com/', 'HTTPS://MYGPO-G.Example.COM:443/');
      const bad = 'mygpo-bad.example.com/feed.xml';
      laptop.subscribe(otherSpelling);
      laptop.subscribe(I);
      laptop.subscribe(bad);
      await laptop.sync('gPodder on laptop');
      expect(laptop.challenges).toBe(1);
      // gPodder rewrites its copy of the URL to the stored spelling; the refused one goes.
      expect(sorted(laptop.feeds)).toEqual(sorted([G, H, I, bad]));
      expect(laptop.updatedUrls).toEqual(
        expect.arrayContaining([
          [otherSpelling, G],
          [bad, ''],
        ]),
      );
      expect(laptop.received.map(sameAction)).toEqual(
        expect.arrayContaining([playG1, downloadG2].map(sameAction)),
      );
      expect(laptop.received.find((action) => action.action === 'download')?.episode).toBe(
        downloadG2.episode,
      );
      expect(await serverFeeds(app, user)).toEqual(sorted([G, H, I]));

      // The first device's next sync sends back its stored since and gets the new feed.
      const since = desktop.podcastsSince;
      await desktop.sync('gPodder on desktop');
      expect(desktop.wire.exchanges).toContainEqual(
        expect.stringContaining(
          `GET /api/2/subscriptions/${user.name}/gpodder-desktop.json?since=${since} → 200`,
        ),
      );
      expect(sorted(desktop.feeds)).toEqual(sorted([G, H, I]));
      expect(desktop.challenges).toBe(1);
    });

    it("the simple API: a device's list as JSON, replaced by a PUT answered empty, and the user's OPML with Basic", async () => {
      const listed = await laptop.request('GET', `/subscriptions/${user.name}/gpodder-laptop.json`);
      expect(strings(listed.json) && sorted(listed.json)).toEqual(sorted([G, H, I]));
      const put = await laptop.request('PUT', `/subscriptions/${user.name}/gpodder-laptop.json`, [G, J]);
      // put_subscriptions: `PUT(...) is None`, so only an empty answer is a success.
      expect(put.response.text).toBe('');
      const replaced = await laptop.request('GET', `/subscriptions/${user.name}/gpodder-laptop.json`);
      expect(strings(replaced.json) && sorted(replaced.json)).toEqual(sorted([G, J]));
      expect(laptop.challenges).toBe(1);

      // gPodder's OPML download (a plain fetch: test/support's OpenAPI check reads JSON answers only).
      const opml = await fetch(new URL(`/subscriptions/${user.name}.opml`, app.url), {
        headers: { authorization: basicOf(user), 'user-agent': 'gPodder/3.11.4' },
      });
      const document = await opml.text();
      expect(opml.status).toBe(200);
      expect(opml.headers.get('content-type')).toMatch(/^(text\/x-opml|application\/xml|text\/xml)\b/);
      expect(document).toMatch(/<opml[^>]*version="2\.0"/);
      const xmlUrls = [...document.matchAll(/xmlUrl="([^"]*)"/g)].map((match) => match[1]);
      expect(sorted(xmlUrls as string[])).toEqual(sorted([G, J]));
    });

    it('wrong credentials: the challenged retry is refused too, with the error body and no session', async () => {
      const stranger = new Mygpo(app, { ...user, password: `${user.password}x` }, 'gpodder-desktop');
      const path = `/api/2/devices/${user.name}.json`;
      const challenged = await stranger.wire.send('GET', path);
      expect(challenged.status).toBe(401);
      expect(challenged.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
      const refused = await stranger.wire.send('GET', path, { authorization: basicOf(stranger.user) });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ code: '401', message: 'User not authorized' });
      expect(refused.headers.get('www-authenticate')).toBe('Basic realm="castlog"');
      expect(stranger.wire.jar.cookies.has('sessionid')).toBe(false);
    });
  });

  describe('AntennaPod, Kasts and gPodder on one account', () => {
    it("converge on one subscription list and see each other's episode actions", async () => {
      const user = await app.freshUser();
      const phone = new AntennaPod(app, user, 'AntennaPod on Fairphone 5');
      const laptop = new Kasts(app, user, 'framework');
      const desktop = new Mygpo(app, user, 'gpodder-tower');
      const [P1, P2, P3] = [feedUrl('mix-1'), feedUrl('mix-2'), feedUrl('mix-3')];
      const plays = {
        phone: play(P1, 1, 600),
        laptop: play(P2, 1, 700),
        desktop: { ...play(P3, 1, 800), device: 'gpodder-tower' },
      };

      phone.feeds.add(P1);
      phone.queuedActions = [plays.phone];
      await phone.signIn();
      await phone.sync();

      laptop.feeds.add(P2);
      laptop.episodeActions = [plays.laptop];
      await laptop.signIn('Kasts on framework', 'laptop');
      await laptop.sync();

      await afterSecond(laptop.lastAnswered);
      desktop.subscribe(P3);
      desktop.actions = [plays.desktop];
      await desktop.sync('gPodder on tower');

      await phone.sync();
      await laptop.sync();
      await desktop.sync('gPodder on tower');
      const all = sorted([P1, P2, P3]);
      expect(await serverFeeds(app, user)).toEqual(all);
      expect([sorted(phone.feeds), sorted(laptop.feeds), sorted(desktop.feeds)]).toEqual([all, all, all]);
      expect(phone.received.map(sameAction)).toEqual(
        expect.arrayContaining([plays.laptop, plays.desktop].map(sameAction)),
      );
      expect(laptop.received.map(sameAction)).toEqual(
        expect.arrayContaining([plays.phone, plays.desktop].map(sameAction)),
      );
      expect(desktop.received.map(sameAction)).toEqual(
        expect.arrayContaining([plays.phone, plays.laptop].map(sameAction)),
      );

      // One of them unsubscribes; the next round removes it everywhere.
      await afterSecond(laptop.lastAnswered);
      desktop.unsubscribe(P1);
      await desktop.sync('gPodder on tower');
      await phone.sync();
      await laptop.sync();
      const rest = sorted([P2, P3]);
      expect(await serverFeeds(app, user)).toEqual(rest);
      expect([sorted(phone.feeds), sorted(laptop.feeds), sorted(desktop.feeds)]).toEqual([rest, rest, rest]);
      const devices = await desktop.getDevices();
      expect(sorted(devices.map((device) => device.id))).toEqual([
        'antennapod_on_fairphone_5',
        'gpodder-tower',
        'kasts-framework',
      ]);
      expect(devices.every((device) => device.subscriptions === 2)).toBe(true);
    });
  });
});
