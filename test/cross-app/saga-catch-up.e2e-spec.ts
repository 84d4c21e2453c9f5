import { freePort } from '@castlog/infra';
import { appendBacklog } from '../support/backlog';
import { RunningChild, startChild } from '../support/processes';
import { projectionAtEnd } from '../support/projection';
import { CastlogUnderTest, childProjectorEnv, startCastlog } from '../support/start-castlog';
import { poll } from '../support/until';

const EVENTS = 60_000;
const USERS = 600;
const FEEDS_PER_USER = 40;
/** One event in 20 a DELETE: thousands of deletions, hundreds in each of the catch-up's batches. */
const DELETE_EVERY = 20;

/** pino's numeric level of `error`. */
const ERROR_LEVEL = 50;

/** A projector catching up with a backlog that holds thousands of deletions, with large batches and
 * the default pool (DATABASE_POOL_SIZE, 10): each applied deletion starts the saga, whose cascade
 * waits for its user's clock lock while the catch-up's next transaction holds it. The saga must
 * not take the pool from the projector, the recovery sweep and readiness: the projector logs no
 * error, readiness always answers and always finds a connection, and every deletion ends
 * finalized. The projector is the built app (`npm run build`). */
describe('a projector catching up through thousands of deletions', () => {
  let app: CastlogUnderTest;
  let projector: RunningChild | undefined;

  beforeAll(async () => {
    app = await startCastlog({ projector: false });
  });
  afterAll(async () => {
    if (projector && projector.child.exitCode === null && projector.child.signalCode === null)
      projector.child.kill('SIGKILL');
    await app?.close();
  });

  it('keeps the pool for the projector and readiness, logs no error and finalizes every deletion', async () => {
    const { deletions } = await appendBacklog(app.runtime.eventLog, {
      events: EVENTS,
      users: USERS,
      feedsPerUser: FEEDS_PER_USER,
      deleteEvery: DELETE_EVERY,
    });
    expect(deletions).toBeGreaterThan(2_000);

    const port = await freePort();
    projector = startChild(
      'projector',
      childProjectorEnv(app, {
        PROJECTOR_BATCH_SIZE: '8000',
        LOG_LEVEL: 'warn',
        PORT: String(port),
      }),
    );
    const child = projector;
    const url = `http://127.0.0.1:${port}`;

    const { dataSource } = app.runtime.database;
    const schema = app.runtime.database.schema;
    const counts = async () => {
      const rows: { status: string; count: number }[] = await dataSource.query(
        `SELECT status, count(*)::int AS count FROM ${schema}.deletions GROUP BY status`,
      );
      return Object.fromEntries(rows.map(({ status, count }) => [status, count]));
    };

    // Readiness is asked all along, once the projector has started (before, a stand-in answers
    // 503 `starting`): ready, or 503 for the lag while the projector is behind; never a check that
    // found the pool taken, nor no answer at all. A dependency's answer later than the check time is
    // allowed, and so is a connection not had in time while the pool had room and nobody waited
    // (`pool: 5 of 10 in use, 0 queries waiting`): two cores shared with the other test files can
    // stall the whole process that long, and it says nothing of the pool.
    const late = (answer: string): boolean => {
      const message = /^503 \{"code":"503","message":"[^:]+: (.*)"\}$/.exec(answer)?.[1];
      return (
        message !== undefined &&
        message.split('; ').every((part) => {
          if (/^(read model|event log): no answer within \d+ ms$/.test(part)) return true;
          const pool =
            /^read model: no connection within \d+ ms \(pool: (\d+) of (\d+) in use, 0 queries waiting\)$/.exec(
              part,
            );
          return pool !== null && Number(pool[1]) < Number(pool[2]);
        })
      );
    };
    const unanswered: string[] = [];
    const answeredLate: string[] = [];
    let probes = 0;
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const response = await fetch(new URL('/health/ready', url), {
          signal: AbortSignal.timeout(10_000),
        }).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
        if (response instanceof Error) {
          if (probes > 0) unanswered.push(`no answer: ${response.message}`);
        } else {
          const body = await response.text();
          const started = response.status === 200 || /projection is \d+ events behind/.test(body);
          const answer = `${response.status} ${body}`;
          if (started) probes += 1;
          else if (probes > 0) (late(answer) ? answeredLate : unanswered).push(answer);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      await child.explaining(
        poll(
          'the projection at the log end with no deletion pending',
          async () => {
            const atEnd = await projectionAtEnd(app.runtime.eventLog, dataSource, schema);
            const byStatus = await counts();
            return atEnd && (byStatus.PENDING ?? 0) === 0 && byStatus;
          },
          { timeoutMs: 240_000, everyMs: 500 },
        ),
      );
    } finally {
      probing = false;
      await prober;
    }

    const byStatus = await counts();
    expect(byStatus.PENDING).toBeUndefined();
    expect(byStatus.SUCCESS).toBeGreaterThan(1_000);
    expect(byStatus.FAILURE).toBeUndefined();
    expect(probes).toBeGreaterThan(10);
    if (answeredLate.length > 0)
      console.log(`[saga catch-up] ${answeredLate.length} of ${probes} probes answered late:`, answeredLate);
    expect(unanswered).toEqual([]);
    const errors = child
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .filter((line) => (JSON.parse(line) as { level: number }).level >= ERROR_LEVEL);
    expect(errors).toEqual([]);
  }, 300_000);
});
