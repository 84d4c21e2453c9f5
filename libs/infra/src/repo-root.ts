import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The castlog checkout above `from` (the directory whose package.json is named castlog), so tools
 * find it whether they run from the sources or from dist/. */
export function repoRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'castlog'
    ) {
      return dir;
    }
  }
  throw new Error(`no castlog package.json above ${from}`);
}
