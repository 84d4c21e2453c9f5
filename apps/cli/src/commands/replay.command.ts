import { LOWER_CASE_IDENTIFIER } from '@castlog/config';
import { EventLog } from '@castlog/event-log';
import { MAX_NAME_LENGTH, projectionCounts } from '@castlog/read-model';
import { describeDifference, replayInto, rideOut, verifyReplay } from '@castlog/replay';
import { Presets, SingleBar } from 'cli-progress';
import { DataSource } from 'typeorm';
import { CliError, CommandIo, describeError, Output, REPLAY_EXIT, runCommand } from './command-io';

/** Where progress goes: a terminal gets a bar, anything else one line now and then. */
export interface ProgressOutput extends Output {
  readonly isTTY?: boolean;
}

export interface ReplayDeps extends Omit<CommandIo, 'stdin'> {
  readonly stderr: ProgressOutput;
  readonly dataSource: DataSource;
  readonly eventLog: EventLog;
  /** The live read model's schema (READ_MODEL_SCHEMA, or its active projection version's). */
  readonly liveSchema: string;
  /** READ_MODEL_SCHEMA: projection version N > 1 is built in `<base>_v<N>`; default liveSchema. */
  readonly readModelBase?: string;
  /** How long verification waits for the live projection to catch up; default 60 s. */
  readonly liveTimeoutMs?: number;
}

export interface ReplayCommandOptions {
  readonly verify?: boolean;
  /** The scratch schema; default `<liveSchema>_replay`. */
  readonly schema?: string;
}

/** `castlog replay [--verify] [--schema <scratch>]`: rebuilds the read model from offset 0 of the
 * log into a scratch schema (dropped first), through the projector's own code path. With --verify,
 * compares it with the live read model once both stand at the same offsets, prints every
 * difference and exits 1 on any. It rides out a dependency out of reach for a while (`rideOut`),
 * saying so on stderr; a failure to run exits 2 (`REPLAY_EXIT`). Progress goes to stderr; stdout
 * carries only the result. */
export function replay(deps: ReplayDeps, options: ReplayCommandOptions = {}): Promise<number> {
  return runCommand(deps, () => replayAndCompare(deps, options), REPLAY_EXIT.couldNotRun);
}

/** The scratch schema: --schema, else `<live>_replay`; refused when it is not a lower-case identifier
 * PostgreSQL keeps whole, or is the live read model's or a projection version's. */
function scratchSchemaOf(deps: ReplayDeps, options: ReplayCommandOptions): string {
  const schema = options.schema ?? `${deps.liveSchema}_replay`;
  if (!LOWER_CASE_IDENTIFIER.test(schema))
    throw new CliError(`--schema must be a lower-case SQL identifier, not ${schema}`);
  if (schema.length > MAX_NAME_LENGTH)
    throw new CliError(
      `--schema must be at most ${MAX_NAME_LENGTH} characters (PostgreSQL cuts longer names), not ${schema.length}`,
    );
  if (schema === deps.liveSchema) {
    throw new CliError(`--schema ${schema} is the live read model: a replay drops its scratch schema`);
  }
  // A version not registered yet has no schema to protect, but a replay's there would stop that
  // version's projector from migrating it.
  const version = new RegExp(`^${deps.readModelBase ?? deps.liveSchema}_v(\\d+)$`).exec(schema);
  if (version !== null) {
    throw new CliError(
      `--schema ${schema} is where projection version ${Number(version[1])} of the read model is built`,
    );
  }
  return schema;
}

async function replayAndCompare(deps: ReplayDeps, options: ReplayCommandOptions): Promise<number> {
  const schema = scratchSchemaOf(deps, options);
  const onOutage = (error: unknown, retryInMs: number) =>
    deps.stderr.write(
      `replay: out of reach: ${describeError(error)}; trying again in ${(retryInMs / 1000).toFixed(1)} s\n`,
    );
  const progress = progressReporter(deps.stderr, 'replay');
  try {
    await replayInto({
      dataSource: deps.dataSource,
      eventLog: deps.eventLog,
      schema,
      onProgress: progress.update,
      onOutage,
    });
  } catch (error) {
    progress.stop(false);
    throw error;
  }
  progress.stop();
  if (!options.verify) {
    const { events, subscriptions } = await projectionCounts(deps.dataSource, schema);
    deps.stdout.write(`replayed ${events} events into schema ${schema}: ${subscriptions} subscriptions\n`);
    return 0;
  }
  deps.stderr.write(`comparing schema ${schema} with the live read model (schema ${deps.liveSchema})\n`);
  // Resumed after an outage: the scratch is caught up from its stored offsets, not replayed again.
  const differences = await rideOut(
    () =>
      verifyReplay({
        dataSource: deps.dataSource,
        eventLog: deps.eventLog,
        schema,
        liveSchema: deps.liveSchema,
        liveTimeoutMs: deps.liveTimeoutMs,
      }),
    { onOutage },
  );
  const { events, subscriptions } = await projectionCounts(deps.dataSource, schema);
  if (differences.length === 0) {
    deps.stdout.write(
      `replay equals the live read model: ${events} events, ${subscriptions} subscriptions\n`,
    );
    return REPLAY_EXIT.equal;
  }
  deps.stdout.write(
    `${differences.length} difference${differences.length === 1 ? '' : 's'} between the live read model ` +
      `(schema ${deps.liveSchema}) and the replay (schema ${schema}) of ${events} events:\n`,
  );
  for (const difference of differences) deps.stdout.write(`${describeDifference(difference)}\n`);
  return REPLAY_EXIT.different;
}

export interface ProgressReporter {
  readonly update: (done: number, total: number) => void;
  /** Ends the bar; `finished` (the default) also prints the line that sums the work up. */
  stop(finished?: boolean): void;
}

const NON_TTY_INTERVAL_MS = 1000;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A cli-progress bar (events/s, ETA) on a terminal; elsewhere one line at the start, at most one a
 * second after, and one at the end. */
export function progressReporter(stderr: ProgressOutput, label: string): ProgressReporter {
  const started = Date.now();
  let last = { done: 0, total: 0 };
  const rate = (done: number) => Math.round(done / Math.max((Date.now() - started) / 1000, 0.001));

  if (stderr.isTTY) {
    const bar = new SingleBar(
      {
        stream: stderr as NodeJS.WritableStream,
        format: `${label} [{bar}] {percentage}% | {value}/{total} events | {rate} events/s | ETA {eta_formatted}`,
        etaBuffer: 50,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    let running = false;
    return {
      update: (done, total) => {
        last = { done, total };
        if (!running) {
          bar.start(total, done, { rate: 0 });
          running = true;
        } else {
          if (total !== bar.getTotal()) bar.setTotal(total);
          bar.update(done, { rate: rate(done) });
        }
      },
      stop: (finished = true) => {
        if (running) bar.stop();
        if (finished) stderr.write(`${label}: ${last.done} events in ${seconds(Date.now() - started)}\n`);
      },
    };
  }

  let printed = -Infinity;
  return {
    update: (done, total) => {
      last = { done, total };
      const now = Date.now();
      if (now - printed < NON_TTY_INTERVAL_MS) return;
      printed = now;
      const perSecond = rate(done);
      const percent = total > 0 ? Math.floor((done / total) * 100) : 100;
      const eta = done > 0 && perSecond > 0 ? seconds(((total - done) / perSecond) * 1000) : '?';
      stderr.write(`${label}: ${done}/${total} events (${percent}%), ${perSecond} events/s, ETA ${eta}\n`);
    },
    stop: (finished = true) => {
      if (!finished) return;
      const elapsed = Date.now() - started;
      stderr.write(`${label}: ${last.done} events in ${seconds(elapsed)} (${rate(last.done)} events/s)\n`);
    },
  };
}
