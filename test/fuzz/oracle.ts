import { checkFeedUrl, DEVICE_TYPES, EPISODE_ACTION_KINDS, isDeviceId } from '@castlog/domain';
import { METHODS as STATUS_METHODS } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import {
  BODY_LIMIT,
  GpodderRoute,
  JSON_TYPES,
  materialize,
  Plan,
  RouteName,
  trimLikeGpodder,
  UPLOAD_BODY_LIMIT,
  World,
} from './generators';
import {
  allowedOnSyncDraft,
  checkSyncDraftAnswer,
  isSyncDraft,
  SYNC_DRAFT_RULES,
  SyncDraftRoute,
} from './sync-draft';

/**
 * What the HTTP fuzzing (test/e2e/fuzz.e2e-spec.ts) expects of an answer: the properties every
 * answer has (never a 5xx, the error body, no stack trace, a sane request id), the statuses each
 * route may answer for a plan, and what a route's own 2xx answer must hold.
 */

/** The contract's message per status (CONTRACT.md); 413 and 429 are the service's own wording,
 * which the contract leaves open. A detail may follow after `: `. */
export const MESSAGES: Readonly<Record<number, string>> = {
  400: 'Input could not be validated',
  401: 'User not authorized',
  404: 'Resource not found',
  405: 'Input could not be validated',
  410: 'Subscription has been deleted',
  413: 'Request body too large',
  429: 'Too many requests',
};

export const STACK_TRACE =
  /\n\s+at \S[^\n]*:\d+:\d+|node_modules[\\/]|[\\/](?:apps|libs)[\\/][\w./\\-]+\.[jt]s\b/;
export const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

// ---------------------------------------------------------------------------------------------
// Oracle.

interface RouteRule {
  readonly method: string;
  readonly pattern: RegExp;
  readonly authenticated: boolean;
  readonly statuses: readonly number[];
}

const UUID_OR_ANY = '[^/]+';
const RULES: Readonly<Record<Exclude<RouteName, 'unknown' | GpodderRoute | SyncDraftRoute>, RouteRule>> = {
  add: { method: 'POST', pattern: /^\/v1\/subscriptions$/, authenticated: true, statuses: [200, 405] },
  list: { method: 'GET', pattern: /^\/v1\/subscriptions$/, authenticated: true, statuses: [200, 405] },
  get: {
    method: 'GET',
    pattern: new RegExp(`^/v1/subscriptions/${UUID_OR_ANY}$`),
    authenticated: true,
    statuses: [200, 404, 405, 410],
  },
  patch: {
    method: 'PATCH',
    pattern: new RegExp(`^/v1/subscriptions/${UUID_OR_ANY}$`),
    authenticated: true,
    statuses: [200, 404, 405, 410],
  },
  delete: {
    method: 'DELETE',
    pattern: new RegExp(`^/v1/subscriptions/${UUID_OR_ANY}$`),
    authenticated: true,
    statuses: [202, 404, 405],
  },
  deletion: {
    method: 'GET',
    pattern: new RegExp(`^/v1/deletions/${UUID_OR_ANY}$`),
    authenticated: true,
    statuses: [200, 404, 405],
  },
  login: { method: 'POST', pattern: /^\/v1\/auth\/login$/, authenticated: false, statuses: [200, 401, 405] },
  refresh: {
    method: 'POST',
    pattern: /^\/v1\/auth\/refresh$/,
    authenticated: false,
    statuses: [200, 401, 405],
  },
};

export const decodes = (path: string) => {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
};

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** The gpodder.net face's routes (CONTRACT.md): method and path. */
const GPODDER_RULES: Readonly<Record<GpodderRoute, { method: string; pattern: RegExp }>> = {
  'gp-login': { method: 'POST', pattern: /^\/api\/2\/auth\/[^/]+\/login\.json$/ },
  'gp-logout': { method: 'POST', pattern: /^\/api\/2\/auth\/[^/]+\/logout\.json$/ },
  'gp-devices': { method: 'GET', pattern: /^\/api\/2\/devices\/[^/]+\.json$/ },
  'gp-device': { method: 'POST', pattern: /^\/api\/2\/devices\/[^/]+\/[^/]+\.json$/ },
  'gp-subscriptions': { method: 'GET', pattern: /^\/api\/2\/subscriptions\/[^/]+\/[^/]+\.json$/ },
  'gp-upload': { method: 'POST', pattern: /^\/api\/2\/subscriptions\/[^/]+\/[^/]+\.json$/ },
  'gp-sync': { method: 'GET', pattern: /^\/api\/2\/sync-devices\/[^/]+\.json$/ },
  'gp-sync-post': { method: 'POST', pattern: /^\/api\/2\/sync-devices\/[^/]+\.json$/ },
  'gp-episodes': { method: 'GET', pattern: /^\/api\/2\/episodes\/[^/]+\.json$/ },
  'gp-episodes-post': { method: 'POST', pattern: /^\/api\/2\/episodes\/[^/]+\.json$/ },
  'gp-settings': {
    method: 'GET',
    pattern: /^\/api\/2\/settings\/[^/]+\/(?:account|device|podcast|episode)\.json$/,
  },
  'gp-settings-post': {
    method: 'POST',
    pattern: /^\/api\/2\/settings\/[^/]+\/(?:account|device|podcast|episode)\.json$/,
  },
  // Any extension: one the lists do not have is 400 "Invalid format".
  'simple-get': { method: 'GET', pattern: /^\/subscriptions\/[^/]+(?:\/[^/]+)?\.[^/.]+$/ },
  'simple-put': { method: 'PUT', pattern: /^\/subscriptions\/[^/]+\/[^/]+\.[^/.]+$/ },
};

/** The routes that take uploads of up to 10,000 actions or URLs, with a body limit of their own. */
const GPODDER_UPLOADS: ReadonlySet<GpodderRoute> = new Set(['gp-upload', 'gp-episodes-post', 'simple-put']);

export const isGpodder = (route: RouteName): route is GpodderRoute => route in GPODDER_RULES;

/** Where the routes with path parameters begin, up to their first parameter, by the status of their
 * invalid input: the gpodder.net face's 400, the Open Podcast API's 405. */
const PARAMETER_PATHS: ReadonlyMap<string, 400 | 405> = new Map([
  ['/api/2/auth/', 400],
  ['/api/2/devices/', 400],
  ['/api/2/episodes/', 400],
  ['/api/2/settings/', 400],
  ['/api/2/subscriptions/', 400],
  ['/api/2/sync-devices/', 400],
  ['/subscriptions/', 400],
  ['/v1/subscriptions/', 405],
  ['/v1/deletions/', 405],
  ['/api/v1/subscriptions/', 400],
]);

/** The status of the router's own refusals (a path that does not percent-decode, a path parameter
 * over its length limit), which come before any route is found: the invalid-input status of the
 * routes with parameters the path lies under (400 on the gpodder.net face, else 405), and 404, an
 * unknown route's, under none. Judged by the path as sent: a target whose `..` leaves its route's
 * path is judged where it lands. */
export const routerRefusalStatus = (pathname: string): 400 | 404 | 405 =>
  [...PARAMETER_PATHS].find(([path]) => pathname.startsWith(path))?.[1] ?? 404;

/** True when (method, path) is served by some route, after the URL parser's normalisation and the
 * router's percent-decoding — a generated "unknown" request that is not unknown is skipped. */
export function isServed(method: string, pathname: string): boolean {
  const decoded = pathname.split('/').map(safeDecode).join('/');
  const first = decoded.split('/')[1] ?? '';
  if (['health', 'metrics', 'openapi.json', 'docs'].includes(first) || decoded.startsWith('/docs'))
    return true;
  // The web pages (HTML, fuzzed by test/e2e/web.e2e-spec.ts) and `/`, which leads to them.
  if (first === 'web' || (decoded === '/' && ['GET', 'HEAD'].includes(method))) return true;
  const effective = method === 'HEAD' ? 'GET' : method;
  return [...Object.values(RULES), ...Object.values(GPODDER_RULES), ...Object.values(SYNC_DRAFT_RULES)].some(
    (rule) => rule.method === effective && (rule.pattern.test(pathname) || rule.pattern.test(decoded)),
  );
}

/** Node's limit on the request line and headers together; past it the request is refused (405). */
export const MAX_HEADER_BYTES = 16 * 1024;

/** The statuses the plan may answer. */
export function allowedStatuses(plan: Plan, bodyBytes: number, headBytes: number): Set<number> {
  const allowed = allowedByRoute(plan, bodyBytes);
  // Node's HTTP parser refuses methods it does not know and heads over its limit: a 405.
  if (!METHODS_NODE_PARSES.has(plan.method) || headBytes > MAX_HEADER_BYTES - 2_000) allowed.add(405);
  return allowed;
}

export const METHODS_NODE_PARSES = new Set(STATUS_METHODS);

function allowedByRoute(plan: Plan, bodyBytes: number): Set<number> {
  // An empty body sent as JSON is refused (405) too.
  const carriesBody = plan.body !== undefined;
  if (isGpodder(plan.route)) return allowedOnGpodder(plan, bodyBytes);
  if (isSyncDraft(plan.route)) return allowedOnSyncDraft(plan, bodyBytes);
  if (plan.route === 'unknown') {
    // Not found whatever the body, which Fastify reads first: only one over the limit is refused.
    const allowed = new Set([404]);
    if (carriesBody) allowed.add(413);
    return allowed;
  }
  const rule = RULES[plan.route];
  // Past the body limit: 413, unless Fastify refuses the content type first, before it reads the
  // body (405).
  if (bodyBytes > BODY_LIMIT) {
    const type = plan.headers['content-type'];
    return new Set(type !== undefined && JSON_TYPES.includes(type) ? [413] : [413, 405]);
  }
  const allowed = new Set(rule.statuses);
  if (!plan.clean) allowed.add(404);
  if (rule.authenticated) {
    if (plan.auth.who === 'none') {
      // Fastify reads and parses the body before the credentials guard runs.
      const early = carriesBody ? [405] : [];
      return new Set([401, ...early, ...(plan.clean ? [] : [404])]);
    }
    if (plan.auth.who === 'unsure') allowed.add(401);
    if (plan.auth.who === 'bob') {
      // Bob has no subscriptions and no deletions.
      allowed.delete(410);
      if (plan.route !== 'list') allowed.delete(200);
    }
  }
  // A structurally valid body sent as JSON: a POST of alice's is added, alice's login succeeds.
  if (plan.validBody && ((plan.route === 'add' && plan.auth.who === 'alice') || plan.route === 'login'))
    return new Set([200]);
  return allowed;
}

/** The gpodder.net face: gpodder's statuses (400 for input that fails validation, 401, 404), read
 * whatever the Content-Type. Credentials of the path's own user and a valid input answer 200 —
 * an invalid one 400, either where the contract leaves it open; credentials of nobody, or of
 * another user than the path's, 401 whatever the input (bodies are read as text, judged after the
 * credentials). Only a body over the limit is refused first (413). */
function allowedOnGpodder(plan: Plan, bodyBytes: number): Set<number> {
  // A body over the route's limit is refused, or its path is not found first.
  if (bodyBytes > (GPODDER_UPLOADS.has(plan.route as GpodderRoute) ? UPLOAD_BODY_LIMIT : BODY_LIMIT))
    return new Set(plan.clean ? [413] : [413, 404]);
  if (plan.route === 'gp-logout') return allowedOnLogout(plan);
  const allowed = new Set<number>();
  // A path the router cannot read as the route (an empty, encoded-slash or over-long segment, an
  // unknown format) is not found, whatever its body, or refused as input, or its user is nobody.
  if (!plan.clean) [400, 401, 404].forEach((status) => allowed.add(status));
  if (plan.auth.who === 'none' || plan.pathUser !== 'own') {
    allowed.add(401);
    return allowed;
  }
  if (plan.auth.who === 'unsure') allowed.add(401);
  if (plan.input !== 'invalid') allowed.add(200);
  if (plan.input !== 'valid') allowed.add(400);
  // Episode actions of a device the user does not have may be not found, as on gpodder.net.
  if (plan.route === 'gp-episodes' && /[?&]device=/.test(plan.target)) allowed.add(404);
  return allowed;
}

/** Logout reads the session cookie alone (CONTRACT: 200 without a cookie or credentials and when
 * logged out, 400 for a cookie of another user's session): 200 whatever the credentials; with a
 * cookie, 400 when the path names someone else, and 429 once cookies naming no session have
 * emptied the address's bucket of failed credentials. */
function allowedOnLogout(plan: Plan): Set<number> {
  const allowed = new Set([200]);
  if (!plan.clean) [400, 401, 404].forEach((status) => allowed.add(status));
  if (plan.headers.cookie !== undefined) {
    allowed.add(429);
    if (plan.pathUser !== 'own') allowed.add(400);
  }
  return allowed;
}

/** An answer as the fetch client saw it. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: unknown;
  readonly isJson: boolean;
  readonly ms: number;
}

/** The properties every answer must have; throws with a description otherwise. */
export function checkAnswer(
  where: string,
  method: string,
  answer: Pick<Answer, 'status' | 'text' | 'json' | 'isJson'> & { header(name: string): string | null },
  sentRequestId?: string,
  answering: Plan['answering'] = 'json',
): void {
  const { status, text, json } = answer;
  const fail = (why: string) => {
    throw new Error(`${where} → ${status}: ${why}\nbody: ${text.slice(0, 500)}`);
  };
  if (status >= 500) fail('a 5xx answer');
  if (STACK_TRACE.test(text)) fail('a stack trace or source path in the body');
  const requestId = answer.header('x-request-id');
  if (requestId === null || !SANE_REQUEST_ID.test(requestId))
    fail(`X-Request-Id ${JSON.stringify(requestId)} is not sane`);
  if (sentRequestId !== undefined && SANE_REQUEST_ID.test(sentRequestId) && requestId !== sentRequestId)
    fail(`X-Request-Id ${requestId} instead of the sane one sent, ${sentRequestId}`);
  if (method === 'HEAD') {
    if (text.length > 0) fail('a body on HEAD');
    return;
  }
  const type = answer.header('content-type') ?? '';
  const success = status >= 200 && status < 300;
  if (success && answering !== 'json') {
    // gpodder.net's empty 200s, and the simple API's OPML and text.
    if (answering === 'empty' && text !== '') fail('a body where gpodder.net answers an empty 200');
    if (answering === 'opml' && (!/xml|opml/i.test(type) || !/<opml\b/.test(text)))
      fail('not an OPML answer');
    if (answering === 'xml' && (!/^application\/xml\b/i.test(type) || !/<podcasts\b/.test(text)))
      fail("not gpodder.net's podcast XML");
    if (answering === 'jsonp') {
      if (!/^application\/javascript\b/i.test(type))
        fail(`content-type ${JSON.stringify(type)}, not a script`);
      if (answer.header('x-content-type-options') !== 'nosniff') fail('a script without nosniff');
      if (!/^[A-Za-z_$][A-Za-z0-9_$.]{0,63}\(\[.*\]\)$/s.test(text)) fail('not a callback of a JSON list');
    }
    if (answering === 'txt' && !/^text\/plain\b/i.test(type))
      fail(`content-type ${JSON.stringify(type)}, not text`);
    return;
  }
  if (!/^application\/json\b/i.test(type)) fail(`content-type ${JSON.stringify(type)}, not JSON`);
  if (!answer.isJson) fail('the body is not JSON');
  if (success) return;
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    fail('the error body is not an object');
  const body = json as Record<string, unknown>;
  const keys = Object.keys(body).sort();
  if (keys.join(',') !== 'code,message')
    fail(`the error body has keys ${keys.join(',')}, not exactly code,message`);
  if (body.code !== String(status)) fail(`code ${JSON.stringify(body.code)} is not "${status}"`);
  const expected = MESSAGES[status];
  if (expected === undefined) fail(`status ${status} is not one the contract names`);
  const message = body.message;
  if (typeof message !== 'string' || !(message === expected || message.startsWith(`${expected}: `)))
    fail(`message ${JSON.stringify(message)} is not "${expected}" (with an optional ": detail")`);
  if (status === 401 && !answer.header('www-authenticate')) fail('401 without WWW-Authenticate');
  if (status === 429 && !(Number(answer.header('retry-after')) >= 1)) fail('429 without Retry-After');
}

/** Checks a route's own 2xx answer a bit further and learns guids, deletion ids and refresh tokens. */
export function learn(plan: Plan, answer: Answer, world: World, where: string): void {
  // The service keeps a user's newest sessions only: follow the newest one Alice is given.
  if (plan.auth.who === 'alice' && plan.pathUser === 'own' && answer.status < 300) {
    const session = answer.headers
      .getSetCookie()
      .map((cookie) => /^sessionid=([^;]+)/.exec(cookie)?.[1])
      .find((value) => value !== undefined);
    if (session !== undefined) world.aliceSession = session;
  }
  if (plan.method === 'HEAD' || answer.status < 200 || answer.status >= 300) return;
  const body = answer.json as any;
  const fail = (why: string): never => {
    throw new Error(`${where} → ${answer.status}: ${why}\nbody: ${answer.text.slice(0, 500)}`);
  };
  if (isGpodder(plan.route)) {
    checkGpodderAnswer(plan, answer, world, fail);
    return;
  }
  if (isSyncDraft(plan.route)) {
    checkSyncDraftAnswer(plan, body, world, fail);
    return;
  }
  const remember = (guid: unknown) => {
    if (typeof guid === 'string' && plan.auth.who !== 'bob' && !world.knownGuids.includes(guid)) {
      world.knownGuids.push(guid);
      if (world.knownGuids.length > 300) world.knownGuids.shift();
    }
  };
  switch (plan.route) {
    case 'add':
      if (!Array.isArray(body?.success) || !Array.isArray(body?.failure))
        fail('success and failure must be arrays');
      body.success.forEach((item: any) => remember(item.guid));
      break;
    case 'patch':
      remember(body?.new_guid);
      break;
    case 'delete':
      if (!Number.isInteger(body?.deletion_id)) fail('no integer deletion_id');
      if (!world.deletionIds.includes(body.deletion_id)) world.deletionIds.push(body.deletion_id);
      break;
    case 'list':
      if (!Number.isInteger(body?.total) || !Array.isArray(body?.subscriptions))
        fail('no total or subscriptions');
      if (body.per_page > 100 || body.subscriptions.length > body.per_page) fail('more than per_page items');
      if (plan.auth.who === 'bob' && (body.total !== 0 || body.subscriptions.length !== 0))
        fail("another user's subscriptions are visible");
      break;
    case 'login':
    case 'refresh':
      if (typeof body?.refresh_token !== 'string' || body?.token_type !== 'Bearer')
        fail('not a token answer');
      world.refreshToken = body.refresh_token;
      break;
    default:
      break;
  }
}

const UNIX_SECONDS = (value: unknown) =>
  Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) < 1e10;
const GPODDER_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const isStrings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** What a gpodder.net 2xx answer must hold, as the apps parse it (timestamps integer Unix seconds,
 * URL lists of strings, update_urls pairs of strings, actions in gpodder's format); Bob, who never
 * writes, sees no data; a refused URL of a valid upload is reported as `[url, ""]`. */
function checkGpodderAnswer(plan: Plan, answer: Answer, world: World, fail: (why: string) => never): void {
  const body = answer.json as any;
  const bob = plan.auth.who === 'bob';
  switch (plan.route as GpodderRoute) {
    case 'gp-subscriptions': {
      if (!isStrings(body?.add) || !isStrings(body?.remove)) fail('add and remove must be lists of URLs');
      if (!UNIX_SECONDS(body.timestamp)) fail('timestamp is not integer Unix seconds');
      if (body.add.some((url: string) => body.remove.includes(url))) fail('a URL both in add and remove');
      if (!/[?&]since=0*[1-9]/.test(plan.target) && body.remove.length > 0) fail('removals without since');
      if (bob && body.add.length + body.remove.length > 0) fail("another user's subscriptions are visible");
      break;
    }
    case 'gp-upload':
    case 'gp-episodes-post': {
      if (!UNIX_SECONDS(body?.timestamp)) fail('timestamp is not integer Unix seconds');
      const pairs = body.update_urls;
      if (!Array.isArray(pairs) || !pairs.every((pair) => isStrings(pair) && pair.length === 2))
        fail('update_urls is not a list of pairs of strings');
      if (plan.input === 'valid' && typeof plan.body === 'string') {
        const sent = JSON.parse(materialize(plan.body, world));
        if (plan.route === 'gp-upload') checkUploadUrls(sent, pairs, fail);
        else checkTrimmedPodcasts(sent, pairs, fail);
      }
      break;
    }
    case 'gp-devices': {
      if (!Array.isArray(body)) fail('not a list of devices');
      for (const device of body)
        if (
          !isDeviceId(device?.id) ||
          typeof device.caption !== 'string' ||
          !(DEVICE_TYPES as readonly unknown[]).includes(device.type) ||
          !Number.isSafeInteger(device.subscriptions) ||
          device.subscriptions < 0
        )
          fail(`a device the apps cannot read: ${JSON.stringify(device).slice(0, 200)}`);
      if (new Set(body.map((device: { id: string }) => device.id)).size !== body.length)
        fail('a device listed twice');
      if (bob && body.some((device: { subscriptions: number }) => device.subscriptions !== 0))
        fail('Bob has subscriptions');
      break;
    }
    case 'gp-sync': {
      const groups = body?.synchronized;
      if (!Array.isArray(groups) || !groups.every(isStrings) || groups.length > 1)
        fail('synchronized is not one group of device ids');
      if (!Array.isArray(body['not-synchronized']) || body['not-synchronized'].length > 0)
        fail('not-synchronized is not empty: every device is synchronized');
      break;
    }
    case 'gp-episodes': {
      if (!UNIX_SECONDS(body?.timestamp)) fail('timestamp is not integer Unix seconds');
      if (!Array.isArray(body.actions)) fail('actions is not a list');
      for (const action of body.actions) {
        const plays = ['started', 'position', 'total'].map((field) => action?.[field]);
        if (
          typeof action?.podcast !== 'string' ||
          typeof action.episode !== 'string' ||
          !(EPISODE_ACTION_KINDS as readonly unknown[]).includes(action.action) ||
          typeof action.timestamp !== 'string' ||
          !GPODDER_TIME.test(action.timestamp) ||
          plays.some(
            (n) => n !== undefined && n !== null && (action.action !== 'play' || !Number.isSafeInteger(n)),
          )
        )
          fail(`an action the apps cannot read: ${JSON.stringify(action).slice(0, 200)}`);
      }
      if (/[?&]aggregated=true(&|$)/.test(plan.target)) {
        const episodes = body.actions.map((action: any) => `${action.podcast}\u0000${action.episode}`);
        if (new Set(episodes).size !== episodes.length) fail('aggregated lists an episode twice');
      }
      if (bob && body.actions.length > 0) fail("another user's actions are visible");
      break;
    }
    case 'gp-settings':
    case 'gp-settings-post': {
      if (!isObjectBody(body) || Object.keys(body).length > 100)
        fail("not a scope's settings: an object of at most 100 keys");
      if (bob && Object.keys(body).length > 0) fail("another user's settings are visible");
      if (plan.route === 'gp-settings-post' && plan.input === 'valid' && typeof plan.body === 'string')
        checkSettingsAnswer(JSON.parse(materialize(plan.body, world)), body, fail);
      break;
    }
    case 'simple-get': {
      const list =
        plan.answering === 'json'
          ? body
          : plan.answering === 'jsonp'
            ? JSON.parse(answer.text.slice(answer.text.indexOf('(') + 1, -1))
            : undefined;
      if (list !== undefined && !isStrings(list)) fail('not a list of URLs');
      if (bob && (list?.length > 0 || /<podcast>/.test(answer.text)))
        fail("another user's subscriptions are visible");
      break;
    }
    default:
      break;
  }
}

const isObjectBody = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A valid settings change answers the scope after it: every key set and not removed with the value
 * set, no key removed. */
function checkSettingsAnswer(
  sent: { set?: Record<string, unknown>; remove?: string[] },
  answered: Record<string, unknown>,
  fail: (why: string) => never,
): void {
  const removed = new Set(sent.remove ?? []);
  for (const key of removed) if (key in answered) fail(`the removed key ${JSON.stringify(key)} is still set`);
  for (const [key, value] of Object.entries(sent.set ?? {}))
    if (!removed.has(key) && !isDeepStrictEqual(answered[key], value))
      fail(`the key ${JSON.stringify(key)} is not answered with the value set`);
}

/** A valid upload's `update_urls`: each URL sent is judged trimmed of white space; one the rules
 * refuse is reported `[sent, ""]`, and one trimmed `[sent, something]`. */
function checkUploadUrls(
  sent: { add: string[]; remove: string[] },
  pairs: string[][],
  fail: (why: string) => never,
) {
  const reported = new Map(pairs.map(([from, to]) => [from, to]));
  for (const url of [...sent.add, ...sent.remove]) {
    const trimmed = trimLikeGpodder(url);
    const checked = checkFeedUrl(trimmed);
    if (!checked.ok && reported.get(url) !== '')
      fail(`the refused URL ${JSON.stringify(url).slice(0, 100)} is not reported as [url, ""]`);
    if (checked.ok && trimmed !== url && !reported.get(url))
      fail(`the trimmed URL ${JSON.stringify(url).slice(0, 100)} is not reported as [sent, trimmed]`);
  }
}

/** Valid episode actions' `update_urls`: `[sent, trimmed]` for each distinct podcast URL sent with
 * white space around it, in the order sent, and nothing else. */
function checkTrimmedPodcasts(sent: { podcast: string }[], pairs: string[][], fail: (why: string) => never) {
  const want = new Map<string, string>();
  for (const { podcast } of sent) {
    const trimmed = trimLikeGpodder(podcast);
    if (trimmed !== podcast) want.set(podcast, trimmed);
  }
  if (JSON.stringify(pairs) !== JSON.stringify([...want]))
    fail(
      `update_urls ${JSON.stringify(pairs).slice(0, 300)}, not the trimmed podcasts ${JSON.stringify([...want])}`,
    );
}

/** With every bucket empty: what the rate limit lets through unanswered by a 429 — requests
 * refused before the limit is consulted (the router, Node's parser, the body parser, and
 * credentials: failed authentication is not rate-limited). */
export function allowedWhenLimited(plan: Plan, _bodyBytes: number, headBytes: number): Set<number> {
  const allowed = new Set<number>();
  if (!METHODS_NODE_PARSES.has(plan.method) || headBytes > MAX_HEADER_BYTES - 2_000) allowed.add(405);
  if (plan.route === 'gp-logout') {
    // No guard and no user's bucket: only the address's, when a cookie names no session.
    const allowed = allowedOnLogout(plan);
    if (plan.body !== undefined) allowed.add(413);
    return allowed;
  }
  if (isGpodder(plan.route)) {
    // The gpodder guard: only a body over the limit before it (413); credentials of nobody or of
    // another user 401 (or 429 once failed credentials have emptied the address's bucket); the
    // user's bucket (429) before any input is judged.
    if (plan.body !== undefined) allowed.add(413);
    if (!plan.clean) [400, 401, 404].forEach((status) => allowed.add(status));
    const own = (plan.auth.who === 'alice' || plan.auth.who === 'bob') && plan.pathUser === 'own';
    if (!own) allowed.add(401);
    if (own || plan.auth.header !== undefined || plan.headers.cookie !== undefined) allowed.add(429);
    return allowed;
  }
  // The sync draft's face refuses input with 400, before the limit when the body fails to parse,
  // and reads the Client-ID after the credentials and the rate limit.
  const invalid = isSyncDraft(plan.route) ? 400 : 405;
  if (plan.body !== undefined) [invalid, 413].forEach((status) => allowed.add(status));
  if (!plan.clean) allowed.add(404);
  const authenticated = !['login', 'refresh', 'draft-login', 'draft-refresh'].includes(plan.route);
  if (authenticated && plan.auth.who !== 'alice') allowed.add(401);
  // Limited: per address on the auth routes, per user, and per address once credentials have failed.
  if (!authenticated || plan.auth.who !== 'none' || plan.auth.header !== undefined) allowed.add(429);
  return allowed;
}
