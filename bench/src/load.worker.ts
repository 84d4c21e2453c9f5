import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
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
      let method = 'GET';
      let path: string;
      let body: string | undefined;
      if (spec.request.kind === 'add') {
        const { runId, items } = spec.request;
        method = 'POST';
        path = spec.request.path;
        body = JSON.stringify({
          subscriptions: Array.from({ length: items }, (_, item) => ({
            feed_url: `https://feeds.bench.example/${runId}/c${index}/r${sequence}/i${item}.xml`,
          })),
        });
      } else {
        const { paths } = spec.request;
        path = paths[(index + sequence * spec.concurrency) % paths.length] as string;
      }
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
