import { isAlive } from '@castlog/infra';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One castlog server per data directory: a pid file, refused while its process lives. Answers
 * what releases it. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const pidFile = join(dataDir, 'castlog.pid');
  let holder = NaN;
  try {
    holder = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    // no lock yet
  }
  if (holder > 0 && holder !== process.pid && isAlive(holder, 'node')) {
    throw new Error(
      `castlog is already running on the data directory ${dataDir} (pid ${holder}); ` +
        'stop it first or choose another CASTLOG_DATA_DIR',
    );
  }
  writeFileSync(pidFile, String(process.pid));
  return () => rmSync(pidFile, { force: true });
}
