import { takeInfra } from './handle';

export default async function globalTeardown(): Promise<void> {
  await takeInfra()?.stop();
}
