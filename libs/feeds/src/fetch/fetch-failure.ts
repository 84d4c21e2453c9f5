/** Why a fetch failed, as `FetchResult` names it. */
export type FailureOutcome =
  'refused' | 'timeout' | 'too-large' | 'http-error' | 'network-error' | 'too-many-redirects';

/** Ends a fetch with a failed result; thrown inside the fetcher, returned to its callers as a value. */
export class FetchFailure extends Error {
  constructor(
    readonly outcome: FailureOutcome,
    readonly detail: string,
    readonly retryAfterMs?: number,
  ) {
    super(detail);
    this.name = 'FetchFailure';
  }
}
