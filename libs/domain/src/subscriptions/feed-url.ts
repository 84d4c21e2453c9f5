import { Guid } from '../events/log-event';

/** The longest feed_url the service accepts (CONTRACT: "at most 2048 characters"). */
export const MAX_FEED_URL_LENGTH = 2048;

export const FEED_URL_MESSAGES = {
  noProtocol: 'No protocol present',
  unsupportedProtocol: 'Unsupported protocol',
  invalid: 'Invalid URL',
} as const;

export const INVALID_GUID_MESSAGE = 'Invalid guid';

export type FeedUrlCheck =
  | { readonly ok: true; readonly feedUrl: string; readonly normalized: string }
  | { readonly ok: false; readonly feedUrl: string; readonly message: string };

/** `scheme:` at the start, as RFC 3986 spells a scheme. */
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
/** `host:port…` without a scheme (`example.com:8080/rss`): RFC 3986 would read `example.com` as a
 * scheme, a client author reads it as a missing protocol. */
const HOST_AND_PORT = /^[^\s:/?#]+:\d+(?:[/?#]|$)/;
/** http or https followed by a non-empty authority. */
const HTTP_WITH_AUTHORITY = /^https?:\/\/[^/?#\\]/i;
/** Whitespace, control characters and backslashes are never part of a URL as sent; WHATWG `URL`
 * would silently strip or rewrite them, so they are refused instead. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\s\u0000-\u001f\u007f\\]/;

/** The text of a non-string feed_url, so a failure item keeps the schema's string type:
 * missing → "", 42 → "42", null → "null", anything else as JSON. */
const asSentText = (value: unknown): string => {
  if (value === undefined) return '';
  const json = JSON.stringify(value) as string | undefined;
  return json ?? String(value);
};

/** Checks one POST item's feed_url against CONTRACT.md: an absolute http or https URL of at most
 * 2048 characters. Scheme problems are reported first; anything else is `Invalid URL`. */
export const checkFeedUrl = (value: unknown): FeedUrlCheck => {
  if (typeof value !== 'string') {
    // Decision (CONTRACT): missing or not a string → `Invalid URL`, feed_url = the JSON text sent.
    return { ok: false, feedUrl: asSentText(value), message: FEED_URL_MESSAGES.invalid };
  }
  const known = checkedTexts.get(value);
  if (known !== undefined) return known;
  const checked = checkFeedUrlText(value);
  if (checkedTexts.size >= CHECKED_TEXTS) checkedTexts.clear();
  checkedTexts.set(value, checked);
  return checked;
};

/** The last checks' answers, by the text checked: the projector checks every item's feed_url twice
 * (for the keys its state is loaded by, then deciding), and parsing a URL is most of a check. The
 * answers are immutable, so sharing one is as good as checking again. Emptied when full. */
const checkedTexts = new Map<string, FeedUrlCheck>();
const CHECKED_TEXTS = 8192;

const checkFeedUrlText = (value: string): FeedUrlCheck => {
  const invalid = { ok: false, feedUrl: value, message: FEED_URL_MESSAGES.invalid } as const;
  // Decision: an empty (or blank) feed_url is `Invalid URL`, not `No protocol present`.
  if (value.trim() === '') return invalid;
  // Surrounding whitespace does not hide the scheme; it makes an http(s) URL invalid below.
  const scheme = SCHEME.exec(value.trim());
  if (scheme === null) return { ok: false, feedUrl: value, message: FEED_URL_MESSAGES.noProtocol };
  const protocol = scheme[1].toLowerCase();
  if (protocol !== 'http' && protocol !== 'https') {
    // Decision: `example.com:8080/rss` has no protocol rather than the protocol `example.com`.
    const message = HOST_AND_PORT.test(value.trim())
      ? FEED_URL_MESSAGES.noProtocol
      : FEED_URL_MESSAGES.unsupportedProtocol;
    return { ok: false, feedUrl: value, message };
  }
  // Decision: the scheme check comes before the length check, so an over-long `ftp:` URL is
  // `Unsupported protocol`; an over-long http(s) URL is `Invalid URL`.
  if (value.length > MAX_FEED_URL_LENGTH) return invalid;
  // Decision: `https:a.example` (no `//`) and `https:///rss` (empty host) are not absolute URLs,
  // although WHATWG `URL` repairs them.
  if (!HTTP_WITH_AUTHORITY.test(value) || FORBIDDEN.test(value)) return invalid;
  const parsed = parseUrl(value);
  if (parsed === undefined) return invalid;
  return { ok: true, feedUrl: value, normalized: normalizedHref(parsed) };
};

const parseUrl = (value: string): URL | undefined => {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
};

/** The form feed_urls are compared in: scheme and host lower-cased, a default port (80 for http,
 * 443 for https) and the fragment dropped, by WHATWG `URL` (which also resolves `.`/`..` path
 * segments and writes an empty path as `/`). The stored spelling stays as sent. Total: a value
 * `URL` cannot parse is returned unchanged. */
export const normalizeFeedUrl = (url: string): string => {
  const parsed = parseUrl(url);
  return parsed === undefined ? url : normalizedHref(parsed);
};

/** `href` without its fragment, as `parsed.hash = ''` would leave it (an empty `#` too): a serialised
 * URL's first `#` starts its fragment, since the parser encodes or refuses it everywhere else. */
const normalizedHref = (parsed: URL): string => {
  const { href } = parsed;
  const fragment = href.indexOf('#');
  return fragment < 0 ? href : href.slice(0, fragment);
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID of any version (or the nil UUID), in any case. */
export const isGuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** The stored form of a guid: lower-case. */
export const normalizeGuid = (guid: string): Guid => guid.toLowerCase();
