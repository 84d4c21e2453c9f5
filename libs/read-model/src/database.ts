import { DataSource } from 'typeorm';
import { ActiveProjection, ProjectionVersions } from './projection-versions';

/** An open database holding the read model. Which migrations made it is the runtime's concern
 * (libs/runtime assembles every library's); the read model's own are in `migrations/`. */
export interface Database {
  readonly url: string;
  /** The schema of this process's own projection version (PROJECTION_VERSION); reads go to the
   * active version, which an ActiveProjection follows. */
  readonly schema: string;
  readonly dataSource: DataSource;
  close(): Promise<void>;
}

/** The version reads are served from: the registered active one, or — in a read model that has
 * none yet — `version`, registered as active (its schema must exist). */
export async function openActiveProjection(
  database: Database,
  base: string,
  version: number,
): Promise<ActiveProjection> {
  const versions = new ProjectionVersions(database.dataSource, base);
  const active = (await versions.active()) ?? (await versions.register(version));
  return new ActiveProjection(versions, active);
}
