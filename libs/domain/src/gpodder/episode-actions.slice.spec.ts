// decideEpisodeActions: POST /api/2/episodes/{user}.json (EpisodeActionsUploaded), given any earlier
// events.
import {
  actionsRecorded,
  addRequested,
  at,
  deciderSpec,
  device,
  deviceUpdated,
  episodeAction,
  episodeActionsUploaded,
  G1,
  T1,
  T2,
  T3,
  USER,
} from '../testing';
import { toGpodderTime } from './device';

const P = 'https://a.example/rss';
const E1 = 'https://a.example/e1.mp3';
const E2 = 'https://a.example/e2.mp3';

const spec = deciderSpec();

describe('an upload of actions', () => {
  // Each with a timestamp, as recorded.
  const play = {
    ...episodeAction(P, E1, { action: 'play', started: 0, position: 120, total: 3600, guid: 'episode-1' }),
    timestamp: '2023-02-23T13:00:00',
  };
  const download = { ...episodeAction(P, E2, { action: 'download' }), timestamp: '2023-02-23T12:00:00' };

  it('records the actions in order, with the sequence of the upload and the instant it was received', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: P, guid: G1 }])))
      .when(at(T2, episodeActionsUploaded([play, download]), 41))
      .thenOutcome(actionsRecorded(T2))
      .thenChanges(
        {
          kind: 'EpisodeActionsRecorded',
          userId: USER,
          sequence: 41,
          receivedAt: T2,
          actions: [play, download],
        },
        { kind: 'ClockAdvanced', userId: USER, lastInstant: T2 },
      ));

  it('leaves the subscriptions and devices as they were when no action names a device: the state holds no actions', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: P, guid: G1 }])))
      .when(at(T2, episodeActionsUploaded([play])))
      .thenDecision(({ before, after }) => {
        expect(after.subscriptions).toBe(before.subscriptions);
        expect(after.byFeedUrl).toBe(before.byFeedUrl);
        expect(after.devices).toBe(before.devices);
        expect(after.lastInstant).toBe(T2);
      }));

  it('gives an action without a timestamp the instant received, as gpodder.net writes it', () =>
    spec
      .when(at(T1 + 789, episodeActionsUploaded([episodeAction(P, E1, { action: 'new' }), download])))
      .thenDecision(({ decision }) => {
        const [recorded] = decision.changes;
        expect(recorded).toMatchObject({
          kind: 'EpisodeActionsRecorded',
          receivedAt: T1 + 789,
          actions: [
            { podcast: P, episode: E1, action: 'new', timestamp: toGpodderTime(T1 + 789) },
            { ...download, timestamp: '2023-02-23T12:00:00' },
          ],
        });
        expect(toGpodderTime(T1 + 789)).toBe('2023-02-23T14:01:00');
      }));

  it('keeps the same action twice: actions are recorded as received, not merged', () =>
    spec.when(at(T1, episodeActionsUploaded([play, play]))).thenDecision(({ decision }) => {
      expect(decision.changes[0]).toMatchObject({ actions: [play, play] });
    }));

  it('a second upload is recorded under its own sequence, beside the first', () =>
    spec
      .given(at(T1, episodeActionsUploaded([play]), 5))
      .when(at(T2, episodeActionsUploaded([play]), 6))
      .thenOutcome(actionsRecorded(T2))
      .thenDecision(({ decision }) => {
        expect(decision.changes[0]).toMatchObject({ sequence: 6, receivedAt: T2, actions: [play] });
      }));

  it('a record time not after the last instant is raised past it, received then', () =>
    spec
      .given(at(T2, addRequested([{ feed_url: P, guid: G1 }])))
      .when(at(T1, episodeActionsUploaded([episodeAction(P, E1)])))
      .thenOutcome(actionsRecorded(T2 + 1))
      .thenDecision(({ decision }) => {
        expect(decision.changes[0]).toMatchObject({
          receivedAt: T2 + 1,
          actions: [{ timestamp: toGpodderTime(T2 + 1) }],
        });
      }));
});

describe('devices named by actions', () => {
  it('a device not used yet is created by its first use, used now, once however many actions name it', () =>
    spec
      .when(
        at(
          T1,
          episodeActionsUploaded([
            episodeAction(P, E1, { device: 'phone' }),
            episodeAction(P, E2, { device: 'phone' }),
            episodeAction(P, E2, { device: 'laptop' }),
            episodeAction(P, E1),
          ]),
        ),
      )
      .thenOutcome(actionsRecorded(T1))
      .thenDecision(({ decision, after }) => {
        expect(decision.changes.map((c) => c.kind)).toEqual([
          'DeviceSaved',
          'DeviceSaved',
          'EpisodeActionsRecorded',
          'ClockAdvanced',
        ]);
        expect(after.devices).toEqual(
          new Map([
            ['phone', device('phone', T1)],
            ['laptop', device('laptop', T1)],
          ]),
        );
      }));

  it('a device the user has keeps its fields, and its last use is now', () =>
    spec
      .given(at(T1, deviceUpdated('phone', { caption: 'Phone', type: 'mobile' })))
      .when(at(T2, episodeActionsUploaded([episodeAction(P, E1, { device: 'phone' })])))
      .thenDecision(({ decision, after }) => {
        expect(decision.changes.map((c) => c.kind)).toEqual([
          'DeviceSaved',
          'EpisodeActionsRecorded',
          'ClockAdvanced',
        ]);
        expect(decision.changes[0]).toEqual({
          kind: 'DeviceSaved',
          device: device('phone', T2, 'Phone', 'mobile'),
        });
        expect(after.devices.get('phone')).toEqual(device('phone', T2, 'Phone', 'mobile'));
      }));

  it('only the devices the actions name are used: the others keep their last use', () =>
    spec
      .given(at(T1, deviceUpdated('phone')), at(T2, deviceUpdated('laptop')))
      .when(
        at(T3, episodeActionsUploaded([episodeAction(P, E1, { device: 'laptop' }), episodeAction(P, E2)])),
      )
      .thenState((s) => {
        expect(s.devices.get('phone')?.lastUsed).toBe(T1);
        expect(s.devices.get('laptop')?.lastUsed).toBe(T3);
      }));
});

describe('an empty upload', () => {
  it('changes nothing, not even the clock, and answers the clock as it was', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: P, guid: G1 }])))
      .when(at(T3, episodeActionsUploaded([])))
      .thenOutcome(actionsRecorded(T1))
      .thenNoChanges()
      .thenState((s) => s.lastInstant === T1));

  it('of a user with nothing answers the clock 0', () =>
    spec
      .when(at(T1, episodeActionsUploaded([])))
      .thenOutcome(actionsRecorded(0))
      .thenNoChanges());
});
