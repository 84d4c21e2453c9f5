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

/** JSON the way org.json on Android writes it: compact, `/` escaped. */
const androidJson = (value: unknown) => JSON.stringify(value).replace(/\//g, '\\/');

/**
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
 */
export class AntennaPod {
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

  /** The login request itself, whatever castlog answers. */
  sendLogin() {
    return this.wire.send(
      'POST',
      `/api/2/auth/${this.user.name}/login.json`,
      { authorization: basicOf(this.user), 'content-type': 'plain/text; charset=utf-8' },
      '',
    );
  }

  async login(): Promise<void> {
    expectStatus('AntennaPod login', await this.sendLogin(), 200);
  }

  async getDevices(): Promise<Device[]> {
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

  /** The sign-in wizard: login, the device list, a new device. Answers the device list it saw. */
  async signIn(): Promise<Device[]> {
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
