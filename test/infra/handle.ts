import type { Infra } from './provision';

// Global setup and teardown are separate modules run in the same process: globalThis links them.
const KEY = Symbol.for('castlog.test.infra');
const slot = globalThis as { [KEY]?: Infra };

export const keepInfra = (infra: Infra): void => void (slot[KEY] = infra);

export function takeInfra(): Infra | undefined {
  const infra = slot[KEY];
  delete slot[KEY];
  return infra;
}
