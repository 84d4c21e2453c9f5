/** A user's clocks as `user_clocks` holds them, read under the row's lock (the projector's and the
 * deletion saga's): the last instant assigned (epoch ms) and the last sync cursor (µs, 0 before
 * any). */
export interface UserClocks {
  readonly lastInstant: number;
  readonly syncClock: number;
}
