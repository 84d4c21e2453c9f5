import { ApiResponse } from '../api-client';
import { CastlogUnderTest, TestUser } from '../start-castlog';
import { poll } from '../until';
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

/**
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
 *   same second is never downloaded by Kasts (see `afterSecond`).
 *   8. Sync::logout → logout(): POST /api/2/auth/{user}/logout.json, Basic, empty JSON-typed body.
 */
export class Kasts {
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
  /** The device list the sign-in saw. */
  devices: Device[] = [];
  /** The largest timestamp castlog answered this app. */
  lastAnswered = 0;

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

  async getDevices(): Promise<Device[]> {
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
    return response.body;
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

  /** SyncJob::doRegularSync. */
  async sync(): Promise<void> {
    await this.syncSubscriptions();
    await this.fetchRemoteEpisodeActions();
    await this.uploadPlays();
  }

  subscribe(url: string) {
    this.feeds.add(url);
    this.feedActions.push({ url, action: 'add' });
  }

  unsubscribe(url: string) {
    this.feeds.delete(url);
    this.feedActions.push({ url, action: 'remove' });
  }

  /** updateDBTimestamp. */
  private stored(timestamp: number, previous: number | undefined) {
    this.lastAnswered = Math.max(this.lastAnswered, timestamp);
    return timestamp > 1 ? timestamp + 1 : previous;
  }

  /** The local changes to upload: every feed the first time, else the FeedActions table. */
  private localChanges(since: number): [string[], string[]] {
    let localAdd: string[];
    let localRemove: string[];
    if (since === 0) {
      localAdd = [...this.feeds];
      localRemove = [];
    } else {
      localAdd = this.feedActions.filter((a) => a.action === 'add').map((a) => a.url);
      localRemove = this.feedActions.filter((a) => a.action === 'remove').map((a) => a.url);
    }
    return [
      [...new Set(localAdd)].filter((url) => !localRemove.includes(url)),
      [...new Set(localRemove)].filter((url) => !localAdd.includes(url)),
    ];
  }

  private async syncSubscriptions(): Promise<void> {
    const since = this.subscriptionTimestamp ?? 0;
    const [localAdd, localRemove] = this.localChanges(since);
    const remote = await this.getSubscriptionChanges(since, this.deviceId);
    for (const url of remote.add) this.feeds.add(url);
    for (const url of remote.remove) this.feeds.delete(url);
    this.subscriptionTimestamp = this.stored(remote.timestamp, this.subscriptionTimestamp);
    if (localAdd.length > 0 || localRemove.length > 0) {
      const uploaded = await this.uploadSubscriptionChanges(localAdd, localRemove, this.deviceId);
      this.subscriptionTimestamp = this.stored(uploaded.timestamp, this.subscriptionTimestamp);
    }
    this.feedActions = [];
  }

  /** Fetched again while the timestamp is far behind the clock and actions come. */
  private async fetchRemoteEpisodeActions(): Promise<void> {
    for (let round = 0; ; round += 1) {
      const episodeSince = this.episodeTimestamp ?? 0;
      const fetched = await this.getEpisodeActions(episodeSince, episodeSince === 0);
      this.received.push(...fetched.actions);
      this.episodeTimestamp = this.stored(fetched.timestamp, this.episodeTimestamp);
      const now = Math.floor(Date.now() / 1000);
      if (fetched.timestamp > now - 10 || fetched.actions.length === 0) break;
      if (round >= 4) throw new Error('Kasts keeps fetching episode actions: the timestamp never catches up');
    }
  }

  /** syncEpisodeStates → uploadEpisodeActions: play actions only, 30 at a time. */
  private async uploadPlays(): Promise<void> {
    const plays = this.episodeActions.filter((action) => action.action === 'play');
    for (let from = 0; from < plays.length; from += 30) {
      const timestamp = await this.uploadEpisodeActions(plays.slice(from, from + 30));
      if (from + 30 >= plays.length) this.episodeTimestamp = this.stored(timestamp, this.episodeTimestamp);
    }
    this.episodeActions = [];
  }
}

/** Polls the wall clock until the second after `timestamp` has begun, so that what another device
 * changes next lands at or after `timestamp + 1`, the `since` Kasts sends: a person changes things
 * on the other device later, and with any server answering whole seconds Kasts has this gap. */
export const afterSecond = (timestamp: number) =>
  poll(`the clock to pass second ${timestamp}`, () => Date.now() >= (timestamp + 1) * 1000, {
    timeoutMs: 5_000,
    everyMs: 50,
  });
