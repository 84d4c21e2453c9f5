import { Config } from '@castlog/config';
import {
  findRunningPostgres,
  onServer,
  RunningPostgres,
  startEmbeddedPostgres,
  withDatabase,
} from '@castlog/infra';
import { join, resolve } from 'node:path';

/** The database castlog keeps on its embedded server. */
const EMBEDDED_DATABASE = 'castlog';

export const embeddedPostgresDir = (config: Config): string =>
  join(resolve(config.CASTLOG_DATA_DIR), 'postgres');

/** The embedded server of CASTLOG_DATA_DIR and the URL of castlog's database on it, created when
 * missing. A server process (`detached`) adopts a server a crashed one left running, else starts one
 * that outlives a Ctrl-C until its own shutdown has drained the API; a command uses the running
 * server, else starts one for itself. `started`: the server this call started or adopted, which its
 * caller stops; none when a command found one running. */
export async function openEmbeddedDatabase(
  config: Config,
  options: { readonly server: boolean; readonly log?: (line: string) => void },
): Promise<{ url: string; started?: RunningPostgres }> {
  const dataDir = embeddedPostgresDir(config);
  const running = findRunningPostgres(dataDir);
  if (running && !options.server) return { url: withDatabase(running.url, EMBEDDED_DATABASE) };
  if (running) options.log?.(`adopting PostgreSQL (pid ${running.pid}) left running on ${dataDir}`);
  const started =
    running ?? (await startEmbeddedPostgres({ dataDir, log: options.log, detached: options.server }));
  try {
    await ensureDatabase(started.url, EMBEDDED_DATABASE);
  } catch (error) {
    if (!running) await started.stop();
    throw error;
  }
  return { url: withDatabase(started.url, EMBEDDED_DATABASE), started };
}

async function ensureDatabase(serverUrl: string, name: string): Promise<void> {
  await onServer(serverUrl, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  });
}
