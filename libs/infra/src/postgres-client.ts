import { Client } from 'pg';

/** `url` with its database replaced by `database`. */
export const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
};

/** Runs `work` on a client of its own at `url`, then ends it. The client's connection may break
 * meanwhile: its pending query rejects, and the `error` event it also emits is not left unhandled. */
export async function onServer<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
