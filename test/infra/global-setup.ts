import { provisionInfra } from './provision';
import { keepInfra } from './handle';

/** Runs once before the workers start; they inherit KAFKA_BROKERS and DATABASE_URL from process.env. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const infra = await provisionInfra(process.env);
  keepInfra(infra);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `\n[infra] ${infra.source}: Kafka ${process.env.KAFKA_BROKERS}, PostgreSQL ${hostOf(process.env.DATABASE_URL)} (${seconds} s)`,
  );
}

const hostOf = (url = ''): string => url.replace(/^.*@/, '');
