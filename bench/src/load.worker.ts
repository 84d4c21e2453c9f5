import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { sharedFeedUrl } from './feed-fixture';
import type { LoadMessage, LoadResult, LoadSpec } from './load';

interface Answer {
  readonly status: number;
  readonly body: string;
}

function send(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Client `index`'s request number `sequence`: what it sends, and where. */
function requestOf(
  { request: spec, concurrency }: LoadSpec,
  index: number,
  sequence: number,
): { method: string; path: string; body?: string } {
  if (spec.kind === 'get')
    return {
      method: 'GET',
      path: spec.paths[(index + sequence * concurrency) % spec.paths.length] as string,
    };
  const bases = spec.kind === 'add' ? spec.feedBases : undefined;
  const feedUrl = (item: number) =>
    bases && bases.length > 0
      ? sharedFeedUrl(bases, sequence, item)
      : `https://feeds.bench.example/${spec.runId}/c${index}/r${sequence}/i${item}.xml`;
  if (spec.kind === 'add')
    return {
      method: 'POST',
      path: spec.path,
      body: JSON.stringify({
        subscriptions: Array.from({ length: spec.items }, (_, item) => ({ feed_url: feedUrl(item) })),
      }),
    };
  const occurredAt = new Date().toISOString();
  return {
    method: 'POST',
    path: spec.path,
    body: JSON.stringify({
      requests: Array.from({ length: spec.actions }, (_, item) => ({
        type: 'subscription',
        action: 'subscribe',
        action_id: randomUUID(),
        occurred_at: occurredAt,
        data: { feed_url: feedUrl(item) },
      })),
    }),
  };
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.concurrency });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let firstError: string | undefined;
  let lastEnd = 0;
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const stopAt = measureFrom + spec.durationMs;
  const measuring = setTimeout(
    () => parentPort?.postMessage({ kind: 'measuring' } satisfies LoadMessage),
    spec.warmupMs,
  );

  const client = async (index: number) => {
    const headers = spec.clientHeaders[index % spec.clientHeaders.length] ?? {};
    for (let sequence = 0; ; sequence += 1) {
      const begin = performance.now();
      if (begin >= stopAt) return;
      const { method, path, body } = requestOf(spec, index, sequence);
      let status = 0;
      let failure: string | undefined;
      try {
        const answer = await send(agent, spec.port, method, path, headers, body);
        status = answer.status;
        if (status !== spec.expectStatus) failure = `${status} ${answer.body.slice(0, 300)}`;
      } catch (error) {
        failure = String(error);
      }
      const end = performance.now();
      if (begin < measureFrom) continue;
      latencies.push(end - begin);
      lastEnd = Math.max(lastEnd, end);
      statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
      if (failure) {
        errors += 1;
        firstError ??= failure;
      }
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, (_, index) => client(index)));
  agent.destroy();
  clearTimeout(measuring);
  return {
    latenciesMs: Float64Array.from(latencies),
    elapsedMs: Math.max(0, lastEnd - measureFrom),
    measured: latencies.length,
    errors,
    statuses,
    ...(firstError ? { firstError } : {}),
  };
}

run(workerData as LoadSpec).then(
  (result) => parentPort?.postMessage({ kind: 'result', result } satisfies LoadMessage),
  (error: unknown) => {
    throw error;
  },
);
