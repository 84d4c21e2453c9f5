/** A map whose entries (never `undefined`, which `get` answers for none) answer until a time each is given, holding at most `maxEntries`: setting
 * one more forgets the entry set longest ago. The clock is the caller's (epoch ms). What the API's
 * caches remember (tokens, verified credentials, feed titles) is kept in one of these. */
export class ExpiringMap<K, V> {
  private readonly entries = new Map<K, { readonly value: V; readonly until: number }>();

  constructor(private readonly maxEntries: number) {}

  /** The value while `nowMs` is before its time; an expired entry is forgotten. */
  get(key: K, nowMs: number): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > nowMs) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Remembers `value` until `untilMs`, as the newest entry. */
  set(key: K, value: V, untilMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, { value, until: untilMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets every entry whose value matches. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
