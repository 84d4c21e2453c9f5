import { KafkaMessage } from 'kafkajs';
import { LogFn, messageOf, pause, retry } from '@castlog/supervision';
import { ConsumerFailures } from '../consumer-failures';
import { ConsumeOptions } from '../event-log.port';
import { heartbeatWhile } from './heartbeat-while';
import { toRecord } from './records';

/** The cause under which a partition's failing batch is reported (see ConsumerFailures). */
export const batchOf = (partition: number) => `batch ${partition}`;

/** What handing batches over to the caller needs, shared by a consumer and its replacements. */
export interface BatchHandling {
  readonly options: ConsumeOptions;
  readonly failures: ConsumerFailures;
  /** Aborts when the caller stops consuming. */
  readonly stopped: AbortSignal;
  readonly log: LogFn;
}

/** A fetched batch of one partition, and what its consumer offers while handing it over. */
export interface FetchedBatch {
  readonly partition: number;
  readonly messages: readonly KafkaMessage[];
  /** Whether the batch is still worth handling: its consumer running, no seek pending for its
   * partition, not stopped. */
  readonly current: () => boolean;
  readonly heartbeat: () => Promise<void>;
}

/** The batches a consumer has fetched and handed over, not yet handled: each partition's run one
 * after another, in the order fetched. */
export class HandingOver {
  private readonly last = new Map<number, Promise<void>>();
  private readonly pending = new Set<Promise<void>>();

  /** Batches not yet handled. */
  get size(): number {
    return this.pending.size;
  }

  /** Runs `handle` once the partition's batches before it are handled: answers that wait
   * (`previous`, none when there is nothing before it) and the batch's own (`handled`). `handle`
   * must not reject. */
  add(partition: number, handle: () => Promise<void>): { previous?: Promise<void>; handled: Promise<void> } {
    const previous = this.last.get(partition);
    const handled = previous ? previous.then(handle) : handle();
    this.last.set(partition, handled);
    this.pending.add(handled);
    const forget = () => {
      this.pending.delete(handled);
      if (this.last.get(partition) === handled) this.last.delete(partition);
    };
    handled.then(forget, forget);
    return { previous, handled };
  }

  settled(): Promise<unknown> {
    return Promise.allSettled(this.pending);
  }
}

/** Hands `batch` to the handler in slices of at most `maxBatchSize` records, each retried with
 * capped backoff, heartbeating, until it succeeds, while the batch is current. Never rejects: it
 * may run after its `eachBatch` has returned. */
export async function handOver(handling: BatchHandling, batch: FetchedBatch): Promise<void> {
  const { options, failures, stopped, log } = handling;
  const { partition, messages, current } = batch;
  const beat = () => batch.heartbeat().catch(() => undefined);
  const max = options.maxBatchSize ?? Number.MAX_SAFE_INTEGER;
  for (let start = 0; start < messages.length; start += max) {
    const slice = messages.slice(start, start + max);
    const handled = await retry(
      async () => {
        await options.handle({ partition, records: slice.map((message) => toRecord(partition, message)) });
        return true;
      },
      {
        signal: stopped,
        wanted: current,
        wait: (delayMs) => heartbeatWhile(pause(delayMs, stopped), beat),
        onFailure: (error, _failures, delayMs) => {
          failures.failed(batchOf(partition), error);
          log(
            'warn',
            `${options.group}, partition ${partition}: batch failed (${messageOf(error)}); ` +
              `retrying in ${Math.round(delayMs)} ms`,
          );
        },
      },
    );
    if (!handled) return;
    failures.cleared(batchOf(partition));
    await beat();
  }
}
