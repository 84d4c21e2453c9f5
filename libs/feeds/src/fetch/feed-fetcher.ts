import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { types } from 'node:util';
import { AddressPolicy } from './address-policy';
import { FetchFailure } from './fetch-failure';
import { ACCEPT_ENCODING, readBody } from './response-body';

/** How the fetcher treats the URLs it is given, which users typed and are hostile until checked. */
export interface FetcherOptions {
  /** Sent as User-Agent on every request. */
  userAgent: string;
  /** For the whole fetch: every DNS lookup, connection, redirect, header and body byte. */
  timeoutMs: number;
  /** The largest body accepted, both as sent and once decoded. */
  maxBytes: number;
  /** How many redirects a fetch follows; one more fails it. */
  maxRedirects: number;
  /** Allows every special-purpose address (loopback, private, link-local...): a home network's feeds. */
  allowPrivate: boolean;
  /** Special-purpose ranges allowed all the same, in CIDR notation (`127.0.0.2/32`). */
  allowedRanges: readonly string[];
}

export type FetchResult =
  | {
      kind: 'fetched';
      body: Uint8Array;
      contentType?: string;
      etag?: string;
      lastModified?: string;
      /** Target of the permanent redirects (301/308) it followed, when any. */
      movedTo?: string;
    }
  | { kind: 'not-modified'; etag?: string; lastModified?: string; movedTo?: string }
  | {
      kind: 'failed';
      outcome: 'refused' | 'timeout' | 'too-large' | 'http-error' | 'network-error' | 'too-many-redirects';
      detail: string;
      retryAfterMs?: number;
    };

/** The validators a previous fetch of the feed answered with, sent back for a conditional GET. */
export interface Validators {
  etag?: string;
  lastModified?: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const PERMANENT_REDIRECTS = new Set([301, 308]);
const ACCEPT = 'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8';

/**
 * Fetches feeds over http and https, refusing special-purpose addresses (after DNS, on every
 * redirect hop, with the connection pinned to the addresses checked) unless the options allow them.
 * Network trouble is a failed result, never a throw. No cookies are kept or sent; credentials in a
 * URL go only to that URL's host (a relative redirect keeps them, another host's URL does not).
 */
export class FeedFetcher {
  private readonly policy: AddressPolicy;

  /** Throws when an `allowedRanges` entry is not CIDR notation. */
  constructor(private readonly options: FetcherOptions) {
    this.policy = new AddressPolicy(options);
  }

  /** Fetches the feed; a conditional GET when validators are given. Never throws for network trouble. */
  async fetch(url: string, validators: Validators): Promise<FetchResult> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.options.timeoutMs);
    const trail = new Trail();
    try {
      return await this.follow(url, validators, deadline.signal, trail);
    } catch (error) {
      if (error instanceof FetchFailure) {
        return failed(error.outcome, trail.describe(error.detail), error.retryAfterMs);
      }
      if (deadline.signal.aborted) {
        return failed('timeout', trail.describe(`no complete answer within ${this.options.timeoutMs} ms`));
      }
      if (isSystemError(error)) return failed('network-error', trail.describe(messageOf(error)));
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Requests the URL, and each redirect's target in turn, until an answer that is not a redirect. */
  private async follow(
    start: string,
    validators: Validators,
    signal: AbortSignal,
    trail: Trail,
  ): Promise<FetchResult> {
    let url = httpUrlOf(start);
    let permanent = true;
    for (let redirects = 0; ; redirects += 1) {
      trail.at(url, redirects);
      const response = await this.request(url, validators, signal);
      const status = response.statusCode ?? 0;
      if (!REDIRECTS.has(status)) {
        return this.answerOf(response, validators, permanent && redirects > 0 ? url.href : undefined);
      }
      response.destroy();
      if (redirects >= this.options.maxRedirects) {
        const limit = this.options.maxRedirects;
        throw new FetchFailure(
          'too-many-redirects',
          `HTTP ${status} is one redirect over the limit of ${limit}`,
        );
      }
      permanent &&= PERMANENT_REDIRECTS.has(status);
      url = locationOf(response, url);
    }
  }

  /** Sends one GET to the URL's checked addresses; resolves with the response once its headers arrive. */
  private async request(url: URL, validators: Validators, signal: AbortSignal): Promise<IncomingMessage> {
    const addresses = await this.checkedAddressesOf(url, signal);
    const options = {
      ...urlToHttpOptions(url),
      method: 'GET',
      headers: this.headersFor(validators),
      // A connection of its own: a pooled socket would skip the pinned lookup.
      agent: false,
      lookup: pinnedLookup(addresses),
      signal,
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(options, resolve);
      request.on('error', reject);
      request.end();
    });
  }

  /** Every address the URL's host names, each allowed by the policy, or a 'refused' failure. */
  private async checkedAddressesOf(url: URL, signal: AbortSignal): Promise<readonly LookupAddress[]> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const family = isIP(host);
    if (family !== 0) {
      const refusal = this.policy.refusalOf(host);
      if (refusal) throw new FetchFailure('refused', `${host} is ${refusal}`);
      return [{ address: host, family }];
    }
    const addresses = await untilAborted(lookup(host, { all: true, order: 'verbatim' }), signal);
    for (const { address } of addresses) {
      const refusal = this.policy.refusalOf(address);
      if (refusal) throw new FetchFailure('refused', `the name resolves to ${address}, which is ${refusal}`);
    }
    return addresses;
  }

  private headersFor(validators: Validators): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {
      'user-agent': this.options.userAgent,
      accept: ACCEPT,
      'accept-encoding': ACCEPT_ENCODING,
    };
    if (validators.etag) headers['if-none-match'] = validators.etag;
    if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
    return headers;
  }

  private async answerOf(
    response: IncomingMessage,
    validators: Validators,
    movedTo: string | undefined,
  ): Promise<FetchResult> {
    const status = response.statusCode ?? 0;
    const etag = headerOf(response, 'etag');
    const lastModified = headerOf(response, 'last-modified');
    if (status === 304) {
      response.destroy();
      // A 304 need not repeat the validators; the ones sent still hold.
      return withoutUndefined<FetchResult>({
        kind: 'not-modified',
        etag: etag ?? validators.etag,
        lastModified: lastModified ?? validators.lastModified,
        movedTo,
      });
    }
    if (status < 200 || status > 299) {
      response.destroy();
      throw httpErrorOf(response);
    }
    const body = await readBody(response, this.options.maxBytes);
    const contentType = headerOf(response, 'content-type');
    return withoutUndefined<FetchResult>({ kind: 'fetched', body, contentType, etag, lastModified, movedTo });
  }
}

/** Where the fetch is, so that a failure's detail names the host (never the path or credentials). */
class Trail {
  private host = '';
  private redirects = 0;

  at(url: URL, redirects: number): void {
    this.host = url.host;
    this.redirects = redirects;
  }

  describe(detail: string): string {
    if (this.host === '') return detail;
    const count = this.redirects;
    const after = count === 0 ? '' : ` after ${count} redirect${count === 1 ? '' : 's'}`;
    return `${this.host}${after}: ${detail}`;
  }
}

function httpUrlOf(text: string): URL {
  const url = URL.parse(text);
  if (!url) throw new FetchFailure('refused', 'the feed URL is not a valid URL');
  if (!isHttp(url)) {
    throw new FetchFailure(
      'refused',
      `the feed URL's scheme is "${url.protocol}", and only http and https are fetched`,
    );
  }
  return url;
}

const isHttp = (url: URL): boolean => url.protocol === 'http:' || url.protocol === 'https:';

/** The redirect's target, resolved against the URL that answered it. */
function locationOf(response: IncomingMessage, base: URL): URL {
  const status = response.statusCode;
  const location = headerOf(response, 'location');
  if (location === undefined)
    throw new FetchFailure('http-error', `HTTP ${status} redirect without a Location`);
  const target = URL.parse(location, base.href);
  if (!target) throw new FetchFailure('http-error', `HTTP ${status} redirect to an invalid URL`);
  if (!isHttp(target)) {
    const scheme = target.protocol;
    throw new FetchFailure(
      'refused',
      `HTTP ${status} redirects to a "${scheme}" URL, and only http and https are fetched`,
    );
  }
  return target;
}

function httpErrorOf(response: IncomingMessage): FetchFailure {
  const status = response.statusCode ?? 0;
  const reason = response.statusMessage ? ` ${response.statusMessage}` : '';
  const retryAfterMs =
    status === 429 || status === 503
      ? retryAfterMsOf(headerOf(response, 'retry-after'), Date.now())
      : undefined;
  const retry = retryAfterMs === undefined ? '' : `, retry after ${Math.ceil(retryAfterMs / 1000)} s`;
  return new FetchFailure('http-error', `HTTP ${status}${reason}${retry}`, retryAfterMs);
}

/** A Retry-After value (delay in seconds, or an HTTP date) as milliseconds from `now`, never negative. */
export function retryAfterMsOf(value: string | undefined, now: number): number | undefined {
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP date form starts with the day's name; Date.parse alone would also take "-5" or "2".
  if (!/^[a-z]{3,9},? /i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A lookup that answers with the addresses already checked, so that a DNS answer changed between
 * the check and the connection (DNS rebinding) cannot take the connection elsewhere.
 */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable = wanted ? addresses.filter(({ family }) => family === wanted) : [...addresses];
    const [first] = usable;
    if (!first) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${wanted} address`);
      error.code = 'ENOTFOUND';
      callback(error, '', 0);
    } else if (options.all) {
      callback(null, usable);
    } else {
      callback(null, first.address, first.family);
    }
  };
}

/** The promise's outcome, or the signal's reason once it aborts (a DNS lookup cannot be cancelled). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const abort = (): void => reject(signal.reason);
    if (signal.aborted) {
      abort();
      return;
    }
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

function headerOf(response: IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text;
}

function failed(outcome: FetchFailure['outcome'], detail: string, retryAfterMs?: number): FetchResult {
  return withoutUndefined<FetchResult>({ kind: 'failed', outcome, detail, retryAfterMs });
}

/** The result without the properties it has no value for, so that logs show only what is known. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

/** Node's errors carry a string code; `isNativeError`, unlike `instanceof`, holds across realms (jest's). */
const isSystemError = (error: unknown): error is NodeJS.ErrnoException =>
  types.isNativeError(error) && typeof (error as NodeJS.ErrnoException).code === 'string';

/** Node's message, with its error code when the message does not already say it. */
function messageOf(error: NodeJS.ErrnoException): string {
  const code = error.code ?? '';
  return error.message.includes(code) ? error.message : `${error.message} (${code})`;
}
