import { AuthStore } from '@castlog/auth';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiClient } from '../support/api-client';
import { uniqueName } from '../support/databases';
import { TestUser } from '../support/start-castlog';
import { poll } from '../support/until';
import { chromiumInstalled } from '../browser/browser';
import { pageFlows, PageTarget } from '../browser/page-flows';

/** The web pages' flows in Chromium against the compose stack (API_URL, DATABASE_URL): through
 * HAProxy in front of two API replicas, so that a sign-in, a form's token and an app password's
 * revocation made on one replica hold on the other. Users are made on the published PostgreSQL,
 * as an operator's `castlog` would. */
(chromiumInstalled ? describe : describe.skip)('the web pages on the compose stack', () => {
  let dataSource: DataSource;
  let target: PageTarget;

  beforeAll(async () => {
    const apiUrl = process.env.API_URL;
    const databaseUrl = process.env.DATABASE_URL;
    if (!apiUrl || !databaseUrl) throw new Error('API_URL and DATABASE_URL must name the running stack');
    dataSource = await new DataSource({ type: 'postgres', url: databaseUrl }).initialize();
    const users = new AuthStore(dataSource);
    const anonymous = new ApiClient(apiUrl);
    target = {
      url: apiUrl,
      users,
      anonymous,
      async freshUser(): Promise<TestUser> {
        const name = uniqueName('pages');
        const password = randomBytes(12).toString('base64url');
        const user = await users.addUser(name, password);
        const { token } = await users.issueToken(name, 'cli', 3_600_000);
        return { id: user.id, name, password, token };
      },
      as: (user) => anonymous.withAuthorization(`Bearer ${user.token}`),
      until: (what, check, timeoutMs) => poll(what, check, timeoutMs ? { timeoutMs } : {}),
    };
  });
  afterAll(async () => {
    await dataSource?.destroy();
  });

  pageFlows(() => target);
});
