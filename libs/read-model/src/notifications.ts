import { RequestOutcome } from '@castlog/domain';

/** Channel on which the projector announces stored offsets (payload: JSON OffsetNotice). */
export const OFFSETS_CHANNEL = 'castlog_offsets';

export interface OffsetNotice {
  readonly schema: string;
  readonly partition: number;
  readonly next: number;
}

/** Channel on which a projection version announces that it now serves reads (payload: JSON
 * ProjectionNotice). Sent in the transaction that switches, so a listener hears it after every
 * offset notice the previous version sent before the switch. */
export const PROJECTIONS_CHANNEL = 'castlog_projections';

export interface ProjectionNotice {
  readonly base: string;
  readonly version: number;
  readonly schema: string;
}

/** A request's outcome as a projector transaction stored it, at the request's log position. */
export interface CommittedOutcome {
  readonly partition: number;
  readonly offset: number;
  readonly eventId: string;
  readonly outcome: RequestOutcome;
}

/** What one projector transaction committed in `schema`, by partition: the offset it stored (as its
 * NOTIFY on OFFSETS_CHANNEL says) and the outcomes of the records it applied there. */
export interface CommitNotice {
  readonly schema: string;
  readonly partitions: readonly {
    readonly partition: number;
    readonly nextOffset: number;
    readonly outcomes: readonly CommittedOutcome[];
  }[];
}

/** The projector's commits, told within its own process as soon as COMMIT returns, ahead of the
 * NOTIFY that reaches every process: an API in the same process (the embedded one) answers a
 * waiting request with the outcome its transaction stored, without reading it back. Listeners run
 * synchronously and must not throw. A process without a projector hears nothing; one without an
 * API tells no one. */
export class LocalCommits {
  private readonly listeners = new Set<(notice: CommitNotice) => void>();

  /** Calls `listener` on every commit from now on; answers how to stop. */
  subscribe(listener: (notice: CommitNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(notice: CommitNotice): void {
    for (const listener of this.listeners) listener(notice);
  }
}
