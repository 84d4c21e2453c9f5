// evolve and the draft changes are applied through.
import { addRequested, at, deciderSpec, G1, G2, G3, T1, T2 } from '../testing';
import { Draft, evolve } from './evolve';

const A = 'https://a.example/rss';

const spec = deciderSpec();

describe('evolve', () => {
  it('leaves the previous state untouched (evolve is immutable)', () =>
    spec.when(at(T1, addRequested([{ feed_url: A, guid: G1 }]))).thenDecision(({ before }) => {
      expect(before.subscriptions.size).toBe(0);
      expect(before.byGuid.size).toBe(0);
      expect(before.lastInstant).toBe(0);
    }));

  it('a draft applies many changes at once exactly as evolve one by one, leaving the state it started from untouched', () =>
    spec
      .given(at(T1, addRequested([{ feed_url: A, guid: G1 }])))
      .when(
        at(
          T2,
          addRequested([
            { feed_url: A, guid: G2 },
            { feed_url: 'https://b.example/rss', guid: G3 },
            { feed_url: 'https://b.example/rss' },
          ]),
        ),
      )
      .thenDecision(({ before, decision }) => {
        const sizes = (s: typeof before) => [
          s.subscriptions.size,
          s.byGuid.size,
          s.byFeedUrl.size,
          s.lastInstant,
        ];
        const untouched = sizes(before);
        const all = new Draft(before).apply(decision.changes).state;
        expect(all).toEqual(decision.changes.reduce(evolve, before));
        expect(sizes(before)).toEqual(untouched);
        expect(sizes(all)).not.toEqual(untouched);
      }));
});
