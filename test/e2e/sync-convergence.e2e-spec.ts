import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import {
  expectedFold,
  runScenario,
  Scenario,
  scenarioArbitrary,
  SyncTransport,
  WireAction,
  WireEntity,
  WireResult,
} from '../../libs/domain/src/testing/sync-clients';
import { uniqueName } from '../support/databases';
import { runCli } from '../support/processes';
import { CastlogUnderTest, childProjectorEnv, startCastlog, TestUser } from '../support/start-castlog';
import { basicOf, draftLogin, SyncClient, syncClientOf } from '../support/sync-face';

/**
 * Convergence of the sync face, against the real service over HTTP (the same property the decider
 * has in libs/domain/src/sync/convergence.spec.ts, with the same client simulation): three client
 * installations of one user, with clocks up to 20 minutes off, act offline, lose answers and send
 * the same actions again, upload and pull in any order. Once all have uploaded and pulled (GET
 * /api/v1/sync with include_own=false, following next_since pages), each one's view is what
 * GET /api/v1/subscriptions?include_unsubscribed=true lists, and that is the last-write-wins fold
 * of every action the service received.
 *
 * The service stamps its own clock, so the clients' clocks follow the machine's: a scenario's wait
 * steps are left out (they would take true time), and the clients' skews make the disorder. Each
 * client authenticates differently: a CLI token, Basic, and a token from the draft's /auth/login.
 * After the runs, `castlog replay --verify` finds the read model equal to a replay of the log.
 */

const RUNS = Number(process.env.CASTLOG_SYNC_RUNS ?? 25);
/** A page size small enough that one pull pages through the few feeds' entities. */
const PULL_LIMIT = 2;

/** The real service as the simulation's server: each client with its own credentials and Client-ID. */
class HttpTransport implements SyncTransport {
  constructor(private readonly clients: ReadonlyMap<string, SyncClient>) {}

  private client(clientId: string): SyncClient {
    const client = this.clients.get(clientId);
    if (client === undefined) throw new Error(`no client ${clientId}`);
    return client;
  }

  async post(clientId: string, actions: readonly WireAction[]): Promise<readonly WireResult[]> {
    const results = await this.client(clientId).sync(actions);
    expect(results.map((result) => result.action_id)).toEqual(actions.map((action) => action.action_id));
    return results;
  }

  async pull(clientId: string, since: string | undefined) {
    const pulled = await this.client(clientId).changes({ since, includeOwn: false, limit: PULL_LIMIT });
    const entities = pulled.changes.map((change) => change.data);
    // Paging never repeats an entity within one pull.
    const ids = entities.map((entity) => entity.sync_id);
    expect(ids.length).toBe(new Set(ids).size);
    return { entities, ...(pulled.since === undefined ? {} : { since: pulled.since }) };
  }
}

/** The clock each client reads: the machine's, which the service's follows. */
const realClock = {
  get now(): number {
    return Date.now();
  },
};

describe('sync face convergence over HTTP', () => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog()));
  afterAll(() => app?.close());

  /** The three clients of a fresh user, each authenticated its own way. */
  const clientsOf = async (user: TestUser): Promise<SyncClient[]> => {
    const login = await draftLogin(app, user);
    return [
      syncClientOf(app, `Bearer ${user.token}`),
      syncClientOf(app, basicOf(user)),
      syncClientOf(app, `Bearer ${login.access_token}`),
    ];
  };

  const runOnce = async (scenario: Scenario): Promise<void> => {
    const user = await app.freshUser();
    const clients = await clientsOf(user);
    const transport = new HttpTransport(new Map(clients.map((client) => [client.clientId, client])));
    const { views, delivered } = await runScenario(
      { ...scenario, steps: scenario.steps.filter((step) => step.kind !== 'wait') },
      transport,
      realClock,
      { client: (n) => clients[n]!.clientId, action: randomUUID },
    );

    const listed = await syncClientOf(app, `Bearer ${user.token}`).subscriptions({
      includeUnsubscribed: true,
      limit: PULL_LIMIT,
    });
    const server = new Map<string, WireEntity>(listed.map((entity) => [entity.sync_id, entity]));
    expect(server.size).toBe(listed.length);
    for (const view of views) expect(view).toEqual(server);
    expect(
      new Map(
        listed.map((entity) => [
          entity.guid,
          { subscribed: entity.unsubscribed_at === undefined, feedUrl: entity.feed_url },
        ]),
      ),
    ).toEqual(expectedFold(delivered));
  };

  it('every client ends with the server view, and the server with the last-write-wins fold', async () => {
    const started = Date.now();
    await fc.assert(fc.asyncProperty(scenarioArbitrary(60), runOnce), {
      numRuns: RUNS,
      // Shrinking makes a fresh user per try: stop in time for fast-check to report the seed.
      interruptAfterTimeLimit: 100_000,
      markInterruptAsFailure: true,
    });
    console.log(`[sync convergence] ${RUNS} runs in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 150_000);

  it('castlog replay --verify finds the read model equal to a replay of the log', async () => {
    await app.untilProjectionAtEnd();
    const replay = await runCli(
      ['replay', '--verify', '--schema', uniqueName('sync_convergence_verify')],
      childProjectorEnv(app),
    );
    expect({ code: replay.code, stderr: replay.code === 0 ? '' : replay.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    expect(replay.stdout).toMatch(/^replay equals the live read model: \d+ events, \d+ subscriptions\n$/);
  }, 120_000);
});
