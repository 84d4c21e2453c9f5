import * as fc from 'fast-check';
import { connect } from 'node:net';
import { materialize, Plan, World } from './generators';
import {
  Answer,
  checkAnswer,
  decodes,
  isServed,
  MAX_HEADER_BYTES,
  METHODS_NODE_PARSES,
  routerRefusalStatus,
} from './oracle';

/**
 * How the HTTP fuzzing (test/e2e/fuzz.e2e-spec.ts) sends a plan: with fetch, checking the answer
 * against the oracle, or as raw bytes over a socket.
 */

/** How long a request may take before the run fails. */
export const TIMEOUT_MS = 10_000;

export class Unsendable extends Error {}

/** Sends the plan with fetch; Unsendable when the client itself refuses the request. */
export async function send(
  baseUrl: string,
  plan: Plan,
  world: World,
): Promise<{ answer: Answer; sent: string; bytes: number }> {
  const target = materialize(plan.target, world);
  const url = new URL(`${baseUrl}${target}`);
  if (url.origin !== new URL(baseUrl).origin) throw new Error(`generator bug: ${target} leaves the service`);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(plan.headers)) headers[name] = materialize(value, world);
  const body = typeof plan.body === 'string' ? materialize(plan.body, world) : plan.body;
  const bytes = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  let request: Request;
  try {
    request = new Request(url, {
      method: plan.method,
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new Unsendable(String(error));
  }
  const started = Date.now();
  let response: Response;
  let raw: Buffer;
  try {
    response = await fetch(request);
    raw = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    // undici checks some header values only when sending (e.g. control characters, cookies).
    if (cause?.code === 'UND_ERR_INVALID_ARG') throw new Unsendable(String(cause));
    throw new Error(
      `${plan.method} ${url.pathname.slice(0, 200)}: no answer after ${Date.now() - started} ms: ${String(error)}${cause ? ` (${String(cause)})` : ''}`,
    );
  }
  const text = raw.toString('utf8');
  let json: unknown;
  let isJson = false;
  try {
    json = JSON.parse(text);
    isJson = true;
  } catch {
    // not JSON
  }
  return {
    answer: {
      status: response.status,
      headers: response.headers,
      text,
      json,
      isJson,
      ms: Date.now() - started,
    },
    sent: `${plan.method} ${url.pathname.slice(0, 300)}${url.search.slice(0, 200)}`,
    bytes,
  };
}

/** Sends the plan (skipping it when the client refuses to, or when an "unknown" route is served
 * after all), checks the properties every answer has, and that its status is one `statuses`
 * allows. */
export async function sendAndCheck(
  baseUrl: string,
  world: World,
  plan: Plan,
  statuses: (plan: Plan, bodyBytes: number, headBytes: number) => Set<number>,
): Promise<{ answer: Answer; target: string; where: string; refusedUnread: boolean } | undefined> {
  const target = materialize(plan.target, world);
  const { pathname } = new URL(`${baseUrl}${target}`);
  if (plan.route === 'unknown') fc.pre(!isServed(plan.method, pathname));
  let result;
  try {
    result = await send(baseUrl, plan, world);
  } catch (error) {
    if (!(error instanceof Unsendable)) throw error;
    fc.pre(false);
    return undefined;
  }
  const { answer, sent, bytes } = result;
  const where = `${sent} (${plan.auth.who}, ${bytes} body bytes, ${answer.ms} ms)`;
  const headBytes = Object.entries(plan.headers).reduce(
    (sum, [name, value]) => sum + name.length + materialize(value, world).length + 4,
    target.length + 20,
  );
  const refusedUnread = headBytes > MAX_HEADER_BYTES - 2_000 || !METHODS_NODE_PARSES.has(plan.method);
  checkAnswer(
    where,
    plan.method,
    { ...answer, header: (name) => answer.headers.get(name) },
    // A head Node's parser refuses (over its limit, an unknown method) is never read: no id to echo.
    plan.headers['x-request-id'] === undefined || refusedUnread
      ? undefined
      : materialize(plan.headers['x-request-id'], world),
    plan.answering,
  );
  const allowed = statuses(plan, bytes, headBytes);
  // The router refuses a path that does not percent-decode, or a path parameter over Fastify's
  // maxParamLength (100), before credentials, rate limit or the body limit.
  if (!decodes(pathname) || pathname.split('/').some((segment) => segment.length > 100))
    allowed.add(routerRefusalStatus(pathname));
  if (!allowed.has(answer.status))
    throw new Error(
      `${where} → ${answer.status}, expected one of ${[...allowed].join(', ')}\nbody: ${answer.text.slice(0, 500)}`,
    );
  return { answer, target, where, refusedUnread };
}

export interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  text: string;
}

/** Reads one HTTP/1.x answer (after any 100 Continue) from the bytes; undefined while incomplete. */
export function parseRaw(all: Buffer, closed: boolean): RawAnswer | undefined {
  const response = all.toString('latin1').replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  const end = response.indexOf('\r\n\r\n');
  const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(response);
  if (end < 0 || !statusLine) return undefined;
  const headers = new Map<string, string>();
  for (const line of response.slice(0, end).split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const body = Buffer.from(response.slice(end + 4), 'latin1');
  const length = headers.get('content-length');
  if (length === undefined ? !closed : body.length < Number(length)) return undefined;
  const text = (length === undefined ? body : body.subarray(0, Number(length))).toString('utf8');
  return { status: Number(statusLine[1]), headers, text };
}

/** Writes the bytes to a fresh connection and reads one answer. When nothing comes back for a
 * while (the request may look unfinished to the server), ends the sending side. */
export function sendRaw(port: number, bytes: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    const finish = (error?: Error, answer?: RawAnswer) => {
      clearTimeout(quiet);
      clearTimeout(timer);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(error);
    };
    const quiet = setTimeout(() => chunks.length === 0 && socket.end(), 2_000);
    const timer = setTimeout(() => finish(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const answer = parseRaw(Buffer.concat(chunks), false);
      if (answer) finish(undefined, answer);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const answer = parseRaw(all, true);
      finish(
        new Error(
          `no HTTP answer before the connection closed, got ${JSON.stringify(all.toString('latin1').slice(0, 200))}`,
        ),
        answer,
      );
    });
    socket.write(bytes);
  });
}
