import { sha1 } from '@noble/hashes/sha1';
import { sha256 } from '@noble/hashes/sha256';
import { utf8ToBytes } from '@noble/hashes/utils';
import { Guid, UserId } from '../events/log-event';

/** A subscription's id on the sync draft's face: a UUID version 4 in form. */
export type SyncId = string;

/** The podcast namespace's UUID (podcastindex.org's `podcast:guid`). */
export const PODCAST_NAMESPACE = 'ead4c236-bf58-58c6-a2c6-a6b28d128cb6';

const hex = (bytes: Uint8Array): string =>
  Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');

/** The first 16 bytes as a UUID of `version`, with RFC 9562's variant bits. */
export const asUuid = (digest: Uint8Array, version: number): string => {
  const bytes = digest.slice(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | (version << 4);
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const text = hex(bytes);
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
};

const uuidBytes = (uuid: string): Uint8Array =>
  Uint8Array.from(uuid.replace(/-/g, '').match(/../g) ?? [], (pair) => parseInt(pair, 16));

/** The sync_id of the user's subscription `id` (its first guid, which never changes): a fixed
 * function of the two, so a subscription has one whichever face created it, and a replay of any
 * log, older ones included, gives it the same one. In UUID v4 form, as the draft asks, from a
 * SHA-256 of both: it is no secret (whoever knows the user id and a guid can compute it), and no
 * credential; the answers that carry it are the user's own. */
export const syncIdOf = (userId: UserId, id: Guid): SyncId =>
  asUuid(sha256(utf8ToBytes(`castlog sync_id\u0000${userId}\u0000${id}`)), 4);

/** The podcast namespace's guid of a feed: UUID v5 of its URL without the scheme and trailing
 * slashes (`normalized` is the URL after the `/v1` normalising), so the `http://` and `https://`
 * spellings of one feed derive one guid. */
export const podcastGuidOf = (normalized: string): Guid => {
  const bare = normalized.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '');
  const name = utf8ToBytes(bare);
  const input = new Uint8Array(16 + name.length);
  input.set(uuidBytes(PODCAST_NAMESPACE));
  input.set(name, 16);
  return asUuid(sha1(input), 5);
};
