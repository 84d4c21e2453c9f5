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
