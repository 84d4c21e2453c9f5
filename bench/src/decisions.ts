/** `node dist/bench/src/decisions.js [events] [rounds]`: Node's time to decide the catch-up's event
 * mix as the projector does, without Kafka or PostgreSQL: batches of 2,000 events, `keysOf` each
 * batch, each user's state as the loader would read it (`reach`, prepared before the clock starts),
 * one draft per user through the batch. Prints the time per event of each round and their median.
 * It measures one build: compare two commits by running each, alternating. */
import {
  decide,
  Draft,
  initialState,
  keysOf,
  LogEvent,
  nextInstant,
  reach,
  UserId,
  UserSubscriptions,
} from '@castlog/domain';
import { EventMix } from './event-mix';
import { formatSpread, spreadOf } from './stats';

const BATCH = 2_000;
const USERS = 4_000;

interface PreparedBatch {
  readonly events: readonly LogEvent[];
  readonly states: ReadonlyMap<UserId, UserSubscriptions>;
}

/** Decides `events` with one draft per user, as the projector's transaction does. */
const decideBatch = (
  events: readonly LogEvent[],
  states: ReadonlyMap<UserId, UserSubscriptions>,
  recordTime: number,
): Map<UserId, Draft> => {
  const drafts = new Map([...states].map(([userId, state]) => [userId, new Draft(state)]));
  for (const event of events) {
    const draft = drafts.get(event.userId) as Draft;
    const state = draft.state;
    const decision = decide(state, { event, sequence: 1 }, nextInstant(recordTime, state.lastInstant));
    draft.apply(decision.changes);
  }
  return drafts;
};

/** The mix's events as the projector gets them (decoded from JSON), with each batch's reached
 * states: every earlier batch decided into whole per-user states first. */
const prepare = (count: number): PreparedBatch[] => {
  const events = JSON.parse(
    JSON.stringify(new EventMix(USERS, 7).next(count).map((envelope) => envelope.value)),
  ) as LogEvent[];
  const whole = new Map<UserId, UserSubscriptions>();
  const batches: PreparedBatch[] = [];
  for (let start = 0; start < events.length; start += BATCH) {
    const batch = events.slice(start, start + BATCH);
    const keys = keysOf(batch);
    const stateOf = (userId: UserId) => whole.get(userId) ?? initialState(userId);
    batches.push({
      events: batch,
      states: new Map([...keys.users].map((u) => [u, reach(stateOf(u), keys)])),
    });
    const drafts = decideBatch(
      batch,
      new Map([...keys.users].map((u) => [u, stateOf(u)])),
      start + 1_700_000_000_000,
    );
    for (const [userId, draft] of drafts) whole.set(userId, draft.state);
  }
  return batches;
};

const main = (): void => {
  const count = Number(process.argv[2] ?? 100_000);
  const rounds = Number(process.argv[3] ?? 7);
  const batches = prepare(count);
  const perEvent: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const started = process.hrtime.bigint();
    for (const batch of batches) {
      keysOf(batch.events);
      decideBatch(batch.events, batch.states, 1_800_000_000_000);
    }
    perEvent.push(Number(process.hrtime.bigint() - started) / 1_000 / count);
  }
  console.log(
    `${count} events, ${rounds} rounds: ${formatSpread(spreadOf(perEvent, 1))} us an event ` +
      `(median, min-max); rounds ${perEvent.map((us) => us.toFixed(1)).join(', ')}`,
  );
};

main();
