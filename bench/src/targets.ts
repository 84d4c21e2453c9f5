import { Spread } from './stats';

/** The targets of the performance issue (2 cores, one run), each stated in every result file as
 * met, missed, or not measured by that run. */
export type TargetStatus = 'met' | 'missed' | 'not measured';

export interface TargetResult {
  readonly id: string;
  readonly scenario: string;
  readonly what: string;
  readonly target: string;
  readonly status: TargetStatus;
  /** The figure compared with the bound (a median of rounds where there are rounds). */
  readonly figure?: number;
  readonly unit?: string;
  /** The rounds' median, lowest and highest, where the figure comes from rounds. */
  readonly rounds?: Spread;
  /** Whether every round alone met the bound. */
  readonly every_round_met?: boolean;
  readonly note?: string;
}

type Json = Record<string, unknown>;

/** The value at a dotted path of the result, if it is there. */
export function valueAt(result: Json, path: string): unknown {
  let value: unknown = result;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Json)[key];
  }
  return value;
}

const numberAt = (result: Json, path: string): number | undefined => {
  const value = valueAt(result, path);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};

const spreadAt = (result: Json, path: string): Spread | undefined => {
  const value = valueAt(result, path) as Partial<Spread> | undefined;
  return typeof value?.median === 'number' && typeof value.min === 'number' && typeof value.max === 'number'
    ? (value as Spread)
    : undefined;
};

interface TargetSpec {
  readonly id: string;
  readonly scenario: string;
  readonly what: string;
  readonly target: string;
  readonly unit: string;
  readonly atMost?: number;
  readonly atLeast?: number;
  /** A bound the run itself gives (its own noise), instead of `atMost`. */
  readonly atMostIn?: (result: Json) => { value?: number; text: string };
  /** The figure, and the rounds behind it when there are rounds. */
  readonly figure: (result: Json) => { value?: number; rounds?: Spread };
  /** Why this run's figure cannot be held against the target (another size or load), if so. */
  readonly notComparable?: (result: Json) => string | undefined;
}

const MILLION = 1_000_000;

const eventsAt = (path: string) => (result: Json) => {
  const events = numberAt(result, path);
  return events === MILLION
    ? undefined
    : `ran ${events?.toLocaleString('en-US') ?? 'an unknown number of'} events; the target is for 1,000,000`;
};

/** The table, in its order, plus replay --verify finding no difference, the gpodder.net
 * clients' two ways of authenticating, the sync draft's face against /v1 and its bare SQL, the
 * feed resolver's time for 10,000 feeds and its weight on the write ratio, and the subscriptions
 * page against /v1's page. */
export const TARGETS: readonly TargetSpec[] = [
  {
    id: 'write.single.throughput',
    scenario: 'write',
    what: 'single POST throughput, 64 clients',
    target: '≥ 0.8 of the baseline (median of rounds)',
    unit: 'ratio',
    atLeast: 0.8,
    figure: (r) => ({
      value: numberAt(r, 'write.throughput_ratio_vs_baseline'),
      rounds: spreadAt(r, 'write.ratios.throughput'),
    }),
    notComparable: (r) => {
      const clients = numberAt(r, 'write.settings.concurrency');
      return clients === 64 ? undefined : `ran ${clients} clients; the target is for 64`;
    },
  },
  {
    id: 'write.single.p99',
    scenario: 'write',
    what: 'single POST p99',
    target: '≤ 2× the baseline’s',
    unit: 'ratio',
    atMost: 2,
    figure: (r) => ({
      value: numberAt(r, 'write.p99_ratio_vs_baseline'),
      rounds: spreadAt(r, 'write.ratios.p99'),
    }),
  },
  {
    id: 'write.batch_100.throughput',
    scenario: 'write',
    what: 'batch-100 POST throughput (items/s)',
    target: '≥ 0.4 of the baseline',
    unit: 'ratio',
    atLeast: 0.4,
    figure: (r) => ({
      value: numberAt(r, 'write.batch_100_throughput_ratio_vs_baseline'),
      rounds: spreadAt(r, 'write.ratios.batch_100_throughput'),
    }),
  },
  {
    id: 'catchup.throughput',
    scenario: 'catchup',
    what: 'catch-up of 1,000,000 events',
    target: '≥ 0.8 of the raw bulk upsert of the same rows',
    unit: 'ratio',
    atLeast: 0.8,
    figure: (r) => ({
      value: numberAt(r, 'catchup.throughput_ratio_vs_baseline'),
      rounds: spreadAt(r, 'catchup.throughput_ratio'),
    }),
    notComparable: eventsAt('catchup.settings.events'),
  },
  {
    id: 'listing.p99',
    scenario: 'listing',
    what: 'change listing p99',
    target: '≤ 1.5× the bare SQL',
    unit: 'ratio',
    atMost: 1.5,
    figure: (r) => ({
      value: numberAt(r, 'listing.p99_ratio_vs_baseline'),
      rounds: spreadAt(r, 'listing.p99_ratio'),
    }),
  },
  {
    id: 'replay.seconds',
    scenario: 'replay',
    what: 'replay + verify of 1,000,000 events',
    target: '≤ 180 s in all',
    unit: 's',
    atMost: 180,
    figure: (r) => {
      const replay = numberAt(r, 'replay.measured.replay_seconds');
      const verify = numberAt(r, 'replay.measured.verify_seconds');
      return { value: replay !== undefined && verify !== undefined ? replay + verify : undefined };
    },
    notComparable: eventsAt('replay.settings.events'),
  },
  {
    id: 'replay.equal',
    scenario: 'replay',
    what: 'replay --verify finds the rebuilt read model equal to the live one',
    target: '0 differences',
    unit: 'differences',
    atMost: 0,
    figure: (r) => ({ value: numberAt(r, 'replay.measured.differences') }),
  },
  {
    id: 'coldstart.ready',
    scenario: 'coldstart',
    what: 'embedded cold start (`npm start` on an existing data dir, build done)',
    target: '≤ 3 s to ready',
    unit: 's',
    atMost: 3,
    figure: (r) => ({
      value: numberAt(r, 'coldstart.seconds_to_ready.median'),
      rounds: spreadAt(r, 'coldstart.seconds_to_ready'),
    }),
  },
  {
    id: 'gpodder.basic.throughput',
    scenario: 'gpodder',
    what: 'gpodder.net syncs, Basic on every request (Kasts) over the session cookie (AntennaPod)',
    target: '≥ 0.8 of the cookie clients’ throughput (median of rounds)',
    unit: 'ratio',
    atLeast: 0.8,
    figure: (r) => ({
      value: numberAt(r, 'gpodder.throughput_ratio_vs_baseline'),
      rounds: spreadAt(r, 'gpodder.throughput_ratio'),
    }),
  },
  {
    id: 'sync.throughput',
    scenario: 'sync',
    what: 'sync draft POSTs of 30 actions (actions/s) over /v1 POSTs of 30 items (items/s), 64 clients',
    target: '≥ 0.8 of the /v1 POSTs’ items/s (median of rounds)',
    unit: 'ratio',
    atLeast: 0.8,
    figure: (r) => ({
      value: numberAt(r, 'sync.throughput_ratio_vs_baseline'),
      rounds: spreadAt(r, 'sync.throughput.throughput_ratio'),
    }),
    notComparable: (r) => {
      const clients = numberAt(r, 'sync.settings.concurrency');
      return clients === 64 ? undefined : `ran ${clients} clients; the target is for 64`;
    },
  },
  {
    id: 'sync.listing.p99',
    scenario: 'sync',
    what: 'sync draft listing (GET /api/v1/sync pages) p99',
    target: '≤ 1.5× the bare SQL',
    unit: 'ratio',
    atMost: 1.5,
    figure: (r) => ({
      value: numberAt(r, 'sync.listing_p99_ratio_vs_baseline'),
      rounds: spreadAt(r, 'sync.listing.p99_ratio'),
    }),
  },
  {
    id: 'feeds.resolve.seconds',
    scenario: 'feeds',
    what: '10,000 distinct feeds resolved from a local server (first subscription to every catalog row fetched)',
    target: '≤ 600 s',
    unit: 's',
    atMost: 600,
    figure: (r) => ({ value: numberAt(r, 'feeds.resolve_seconds') }),
    notComparable: (r) => {
      const feeds = numberAt(r, 'feeds.settings.feeds');
      return feeds === 10_000
        ? undefined
        : `ran ${feeds?.toLocaleString('en-US') ?? 'an unknown number of'} feeds; the target is for 10,000`;
    },
  },
  {
    id: 'feeds.write_ratio',
    scenario: 'feeds',
    what: 'single POST throughput ratio (castlog / baseline, 64 clients) while the resolver resolves feeds: drop of the median from the rounds where it is idle',
    target: "≤ the idle rounds' spread (their max − min ratio)",
    unit: 'ratio',
    atMostIn: (r) => {
      const value = numberAt(r, 'feeds.write_ratio_noise');
      return { value, text: `the idle rounds' spread: ${value ?? 'none'}` };
    },
    figure: (r) => ({
      value: numberAt(r, 'feeds.write_ratio_drop'),
      rounds: spreadAt(r, 'feeds.write.paired_drop'),
    }),
    notComparable: (r) => {
      const clients = numberAt(r, 'feeds.settings.concurrency');
      return clients === 64 ? undefined : `ran ${clients} clients; the target is for 64`;
    },
  },
  {
    id: 'web.p50',
    scenario: 'web',
    what: 'subscriptions page (GET /web/subscriptions) p50, user with 5,000 subscriptions',
    target: '≤ 1.5× GET /v1/subscriptions?per_page=5000 (served as 100)',
    unit: 'ratio',
    atMost: 1.5,
    figure: (r) => ({
      value: numberAt(r, 'web.p50_ratio_vs_baseline'),
      rounds: spreadAt(r, 'web.p50_ratio'),
    }),
    notComparable: (r) => {
      const subscriptions = numberAt(r, 'web.settings.subscriptions');
      return subscriptions === 5_000
        ? undefined
        : `ran ${subscriptions?.toLocaleString('en-US') ?? 'an unknown number of'} subscriptions; the target is for 5,000`;
    },
  },
];

const passes = (spec: TargetSpec, value: number, atMost = spec.atMost): boolean =>
  (spec.atLeast === undefined || value >= spec.atLeast) && (atMost === undefined || value <= atMost);

/** Every target against a run's result: met or missed with its figure, or not measured (the
 * scenario did not run, or ran at another size than the target's). */
export function evaluateTargets(result: Json): TargetResult[] {
  return TARGETS.map((spec) => {
    const base = { id: spec.id, scenario: spec.scenario, what: spec.what, target: spec.target };
    if (valueAt(result, spec.scenario) === undefined)
      return { ...base, status: 'not measured', note: `the ${spec.scenario} scenario did not run` };
    const { value, rounds } = spec.figure(result);
    const bound = spec.atMostIn?.(result);
    if (value === undefined || (bound && bound.value === undefined))
      return { ...base, status: 'not measured', note: 'the run produced no figure for it' };
    const atMost = bound?.value ?? spec.atMost;
    const figures = {
      figure: value,
      unit: spec.unit,
      ...(rounds
        ? { rounds, every_round_met: passes(spec, rounds.min, atMost) && passes(spec, rounds.max, atMost) }
        : {}),
    };
    const reason = spec.notComparable?.(result);
    if (reason) return { ...base, status: 'not measured', ...figures, note: reason };
    return {
      ...base,
      status: passes(spec, value, atMost) ? 'met' : 'missed',
      ...figures,
      ...(bound ? { note: bound.text } : {}),
    };
  });
}

/** The bound of a target, for the summary table's rows. */
export function targetOf(id: string): { text: string; met: (value: number) => boolean } {
  const spec = TARGETS.find((candidate) => candidate.id === id);
  if (!spec) throw new Error(`no target ${id}`);
  return { text: spec.target, met: (value) => Number.isFinite(value) && passes(spec, value) };
}
