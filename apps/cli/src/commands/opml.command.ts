import { findUserId } from '@castlog/auth';
import { MAX_TIMER_MS, parseDuration } from '@castlog/config';
import {
  AddItem,
  FailedItem,
  isGuid,
  isOutcomeOf,
  normalizeGuid,
  RequestOutcome,
  SubscriptionsAddRequested,
} from '@castlog/domain';
import { envelopeOf, EventLog, LogPosition } from '@castlog/event-log';
import { FeedCatalog } from '@castlog/feeds';
import { decodeText, TextEncodingError } from '@castlog/http';
import { chunksOf, OpmlError, OpmlFeed, parseOpml, toOpml } from '@castlog/opml';
import { GpodderQuery, OutcomesQuery, positionKey } from '@castlog/read-model';
import { Presets, SingleBar } from 'cli-progress';
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { CliError, CommandIo, Output, runCommand } from './command-io';

/** Where progress goes: a terminal gets a bar, anything else one line per chunk. */
export interface ProgressOutput extends Output {
  readonly isTTY?: boolean;
}

export interface OpmlDeps extends Omit<CommandIo, 'stdin'> {
  readonly stderr: ProgressOutput;
  readonly dataSource: DataSource;
  readonly eventLog: EventLog;
  /** The schema of the projection version that serves reads, where the subscriptions and the
   * outcomes are. */
  readonly schema: string;
  /** The pause between two looks at the stored outcomes; default 200 ms. */
  readonly pollIntervalMs?: number;
}

export interface OpmlExportOptions {
  /** Write the document to this file instead of stdout. */
  readonly output?: string;
}

export interface OpmlImportOptions {
  /** How long to wait for the next chunk's outcome, as a duration (`30s`, `2m`). */
  readonly timeout?: string;
}

const DEFAULT_OUTCOME_TIMEOUT_MS = 60_000;
const DEFAULT_POLL_INTERVAL_MS = 200;
/** Failed feeds listed one per line on stderr; the rest are counted. */
const MAX_LISTED_FAILURES = 20;

/** `castlog opml export <user> [--output <file>]`: the user's subscribed feeds as an OPML 2.0
 * document (each named by its title when the feed catalog knows it), on stdout or in the file. */
export function opmlExport(deps: OpmlDeps, user: string, options: OpmlExportOptions = {}): Promise<number> {
  return runCommand(deps, async () => {
    const userId = await userIdOf(deps.dataSource, user);
    const urls = await new GpodderQuery(deps.dataSource, deps).subscribedUrls(userId);
    const feeds = await new FeedCatalog(deps.dataSource, deps).withTitles(userId, urls);
    const document = toOpml(feeds, { title: `castlog subscriptions of ${user}`, dateCreated: new Date() });
    if (options.output === undefined) {
      deps.stdout.write(document);
      return 0;
    }
    try {
      await writeFile(options.output, document, 'utf8');
    } catch (error) {
      throw new CliError(`cannot write ${options.output}: ${reason(error)}`);
    }
    deps.stderr.write(`wrote ${urls.length} feed${urls.length === 1 ? '' : 's'} to ${options.output}\n`);
    return 0;
  });
}

/** `castlog opml import <user> <file> [--timeout <duration>]`: appends the file's feeds to the log as
 * SubscriptionsAddRequested events (what an OPA POST appends), at most 1000 items each, then waits
 * until the projector has stored each one's outcome and reports how many feeds were added and
 * which failed. */
export function opmlImport(
  deps: OpmlDeps,
  user: string,
  file: string,
  options: OpmlImportOptions = {},
): Promise<number> {
  return runCommand(deps, async () => {
    const timeoutMs =
      options.timeout === undefined ? DEFAULT_OUTCOME_TIMEOUT_MS : parseTimeout(options.timeout);
    const feeds = await readFeeds(file);
    const userId = await userIdOf(deps.dataSource, user);
    if (feeds.length === 0) {
      deps.stderr.write(`no feeds in ${file}\n`);
      deps.stdout.write(`imported ${file} for ${user}: subscribed 0, failed 0\n`);
      return 0;
    }

    const requestId = `opml-import-${randomUUID()}`;
    const chunks = chunksOf(feeds).map((chunk): SubscriptionsAddRequested => ({
      type: 'SubscriptionsAddRequested',
      userId,
      items: chunk.map((feed): AddItem => ({ feedUrl: feed.url, candidateGuid: randomUUID() })),
    }));
    const positions = await appendChunks(deps.eventLog, chunks, requestId);
    deps.stderr.write(
      `appended ${feeds.length} feed${feeds.length === 1 ? '' : 's'} in ${chunks.length} ` +
        `event${chunks.length === 1 ? '' : 's'} (request ${requestId}); waiting for the projector\n`,
    );

    const progress = importProgress(deps.stderr, feeds.length, chunks.length);
    let added = 0;
    const failures: FailedItem[] = [];
    try {
      await waitForOutcomes(deps, positions, timeoutMs, (index, outcome) => {
        if (!isOutcomeOf(chunks[index]!, outcome)) {
          throw new CliError(`unexpected outcome ${outcome.kind} for chunk ${index + 1}`);
        }
        added += outcome.success.length;
        failures.push(...outcome.failure);
        progress.chunkApplied(chunks[index]!.items.length, added, failures.length);
      });
    } finally {
      progress.stop();
    }

    for (const failure of failures.slice(0, MAX_LISTED_FAILURES)) {
      deps.stderr.write(`failed: ${failure.feedUrl}: ${failure.message}\n`);
    }
    if (failures.length > MAX_LISTED_FAILURES) {
      deps.stderr.write(`… and ${failures.length - MAX_LISTED_FAILURES} more failed\n`);
    }
    deps.stdout.write(`imported ${file} for ${user}: subscribed ${added}, failed ${failures.length}\n`);
    return 0;
  });
}

/** The user's id, by name (or by id). */
async function userIdOf(dataSource: DataSource, user: string): Promise<string> {
  const id = await findUserId(dataSource, user, isGuid(user) ? normalizeGuid(user) : null);
  if (!id) throw new CliError(`no user ${user}`);
  return id;
}

async function readFeeds(file: string): Promise<OpmlFeed[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${reason(error)}`);
  }
  try {
    return parseOpml(decodeText(bytes)).feeds;
  } catch (error) {
    if (error instanceof OpmlError || error instanceof TextEncodingError)
      throw new CliError(`${file}: ${error.message}`);
    throw error;
  }
}

function reason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EACCES') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}

function parseTimeout(text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    throw new CliError(`--timeout must be a duration such as 30s or 2m, not ${JSON.stringify(text)}`);
  }
  if (ms <= 0) throw new CliError('--timeout must be greater than 0');
  if (!(ms <= MAX_TIMER_MS)) throw new CliError('--timeout must be at most 24d');
  return ms;
}

/** Appends the chunks one event per append (each a request of its own size), in order. When one
 * fails, says how many are in the log already. */
async function appendChunks(
  eventLog: EventLog,
  chunks: readonly SubscriptionsAddRequested[],
  requestId: string,
): Promise<LogPosition[]> {
  const positions: LogPosition[] = [];
  for (const [index, event] of chunks.entries()) {
    const envelope = envelopeOf(event, requestId);
    try {
      const [position] = await eventLog.append([envelope]);
      if (!position) throw new Error('the log answered no position');
      positions.push(position);
    } catch (error) {
      const appended =
        index === 0
          ? 'none was appended'
          : `the first ${index} were appended and will apply when a projector runs`;
      throw new CliError(
        `appending event ${index + 1} of ${chunks.length} to the log failed (${appended}): ${reason(error)}`,
      );
    }
  }
  return positions;
}

/** Looks at the stored outcomes of `positions` until every one is there, calling `onApplied` for
 * each in log order as it arrives. Gives up when none arrives for `timeoutMs`. */
async function waitForOutcomes(
  deps: OpmlDeps,
  positions: readonly LogPosition[],
  timeoutMs: number,
  onApplied: (index: number, outcome: RequestOutcome) => void,
): Promise<void> {
  const query = new OutcomesQuery(deps.dataSource, deps);
  const pollMs = deps.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  let next = 0;
  let lastArrival = Date.now();
  while (next < positions.length) {
    const stored = await query.atPositions(positions.slice(next));
    // One user's events are in one partition, applied in order: report the applied prefix.
    const before = next;
    for (let outcome = stored.get(positionKey(positions[next]!)); outcome !== undefined;) {
      onApplied(next, outcome);
      next += 1;
      outcome = next < positions.length ? stored.get(positionKey(positions[next]!)) : undefined;
    }
    if (next === positions.length) return;
    if (next > before) lastArrival = Date.now();
    else if (Date.now() - lastArrival >= timeoutMs) {
      throw new CliError(
        `the outcomes of ${positions.length - next} of ${positions.length} events did not arrive within ` +
          `${seconds(timeoutMs)}: the events were appended to the log and will apply when a projector runs`,
      );
    }
    await sleep(pollMs);
  }
}

const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;

interface ImportProgress {
  chunkApplied(feeds: number, added: number, failed: number): void;
  stop(): void;
}

/** A cli-progress bar of feeds applied on a terminal; elsewhere one line per chunk. */
function importProgress(stderr: ProgressOutput, total: number, chunks: number): ImportProgress {
  let done = 0;
  let applied = 0;
  if (stderr.isTTY) {
    const bar = new SingleBar(
      {
        stream: stderr as NodeJS.WritableStream,
        format: 'opml import [{bar}] {percentage}% | {value}/{total} feeds | {chunk}/{chunks} events',
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    bar.start(total, 0, { chunk: 0, chunks });
    return {
      chunkApplied(feeds) {
        done += feeds;
        applied += 1;
        bar.update(done, { chunk: applied, chunks });
      },
      stop: () => bar.stop(),
    };
  }
  return {
    chunkApplied(feeds, added, failed) {
      done += feeds;
      applied += 1;
      stderr.write(
        `opml import: event ${applied}/${chunks} applied, ${done}/${total} feeds ` +
          `(${Math.floor((done / total) * 100)}%): subscribed ${added}, failed ${failed}\n`,
      );
    },
    stop: () => undefined,
  };
}
