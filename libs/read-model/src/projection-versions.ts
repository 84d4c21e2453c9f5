import { setTimeout as delay } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { PROJECTIONS_CHANNEL, ProjectionNotice } from './notifications';
import { deficit, storedOffsets } from './projection-offsets';
import { inTransaction, quoteIdent, Sql } from './sql';

/** Version 1 lives in the base schema itself, so a read model built before versions existed is
 * version 1 as it stands; version N > 1 in `<base>_v<N>`. */
export const projectionSchema = (base: string, version: number): string =>
  version === 1 ? base : `${base}_v${version}`;

/** Each version consumes the log under a consumer group of its own, from offset 0. */
export const projectorGroup = (group: string, version: number): string =>
  version === 1 ? group : `${group}-v${version}`;

export type ProjectionVersionStatus = 'building' | 'active' | 'retired';

export interface ProjectionVersion {
  readonly version: number;
  readonly schema: string;
}

export interface RegisteredVersion extends ProjectionVersion {
  readonly status: ProjectionVersionStatus;
  readonly registeredAt: Date;
  readonly activatedAt: Date | null;
}

interface Row {
  version: number;
  schema: string;
  status: ProjectionVersionStatus;
  registered_at: Date;
  activated_at: Date | null;
}

const registered = (row: Row): RegisteredVersion => ({
  version: row.version,
  schema: row.schema,
  status: row.status,
  registeredAt: row.registered_at,
  activatedAt: row.activated_at,
});

export type ActivationResult = 'activated' | 'already-active' | 'behind';

const HOLD_POLL_MS = 10;

/** The projection versions of one read model and the switch between them. A version takes over
 * reads only once its stored offset has reached the active version's in every partition, checked
 * with the active version's offsets locked: a write the API acknowledged from the old version is
 * therefore always in the new one. */
export class ProjectionVersions {
  constructor(
    private readonly dataSource: DataSource,
    readonly base: string,
  ) {}

  async list(): Promise<RegisteredVersion[]> {
    const rows: Row[] = await this.dataSource.query(
      `SELECT * FROM castlog_projections.versions WHERE base = $1 ORDER BY version`,
      [this.base],
    );
    return rows.map(registered);
  }

  async active(): Promise<RegisteredVersion | undefined> {
    return (await this.list()).find((version) => version.status === 'active');
  }

  /** Registers `version` (its schema must exist): active when the read model has no active version
   * yet, else building. Answers the active version. */
  async register(version: number): Promise<RegisteredVersion> {
    return inTransaction(this.dataSource, async (sql) => {
      await this.lock(sql);
      await sql.query(
        `INSERT INTO castlog_projections.versions (base, version, schema, status, activated_at)
         SELECT $1, $2, $3, a.status, CASE a.status WHEN 'active' THEN now() END
           FROM (SELECT CASE WHEN EXISTS (SELECT 1 FROM castlog_projections.versions
                                           WHERE base = $1 AND status = 'active')
                        THEN 'building' ELSE 'active' END AS status) a
         ON CONFLICT (base, version) DO NOTHING`,
        [this.base, version, projectionSchema(this.base, version)],
      );
      const [active] = await sql.query<Row>(
        `SELECT * FROM castlog_projections.versions WHERE base = $1 AND status = 'active'`,
        [this.base],
      );
      if (!active) throw new Error(`read model ${this.base} has no active projection version`);
      return registered(active);
    });
  }

  /** Makes `version` serve reads once it has caught up with the active version, and announces the
   * switch on PROJECTIONS_CHANNEL when it commits. Under write load the active version keeps
   * moving, so equal offsets are rarely seen by looking: once `version` is within `closeEnough`
   * events, the active version's offsets are locked (its projector pauses, and acknowledged writes
   * with it) while `version` catches up to them, for at most `holdMs`. A write the API
   * acknowledged from the old version is therefore always in the new one. */
  async activateIfCaughtUp(
    version: number,
    { closeEnough = 2000, holdMs = 2000 }: { closeEnough?: number; holdMs?: number } = {},
  ): Promise<ActivationResult> {
    const active = await this.active();
    if (active?.version === version) return 'already-active';
    const schema = projectionSchema(this.base, version);
    // A cheap look without locks first: most checks during a rebuild end here.
    if (active) {
      const [target, offsets] = [
        await storedOffsets(this.dataSource, active.schema),
        await storedOffsets(this.dataSource, schema),
      ];
      if (deficit(target, offsets) > closeEnough) return 'behind';
    }
    return inTransaction(this.dataSource, async (sql) => {
      await this.lock(sql);
      const [current] = await sql.query<Row>(
        `SELECT * FROM castlog_projections.versions WHERE base = $1 AND status = 'active'`,
        [this.base],
      );
      if (current?.version === version) return 'already-active';
      if (current) {
        const locked = await sql.query<{ partition: number; next_offset: string }>(
          `SELECT partition, next_offset FROM ${quoteIdent(current.schema)}.projection_offsets
            ORDER BY partition FOR UPDATE`,
        );
        const target = new Map(locked.map((row) => [row.partition, Number(row.next_offset)]));
        const deadline = Date.now() + holdMs;
        // Each statement sees what has committed since: `version`'s projector is not held.
        while (deficit(target, await storedOffsets(sql, schema)) > 0) {
          if (Date.now() >= deadline) return 'behind';
          await delay(HOLD_POLL_MS);
        }
      }
      await sql.query(
        `UPDATE castlog_projections.versions SET status = 'retired' WHERE base = $1 AND status = 'active'`,
        [this.base],
      );
      const moved = await sql.query<Row>(
        `UPDATE castlog_projections.versions SET status = 'active', activated_at = now()
          WHERE base = $1 AND version = $2 RETURNING *`,
        [this.base, version],
      );
      if (moved.length === 0) throw new Error(`projection version ${version} is not registered`);
      const notice: ProjectionNotice = { base: this.base, version, schema };
      await sql.query('SELECT pg_notify($1, $2)', [PROJECTIONS_CHANNEL, JSON.stringify(notice)]);
      return 'activated';
    });
  }

  /** Serialises registration and switches of this read model. */
  private async lock(sql: Sql): Promise<void> {
    await sql.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`castlog_projections:${this.base}`]);
  }
}

/** Where reads go: a schema that may change between two queries, never within one. */
export interface ReadSchema {
  readonly schema: string;
}

/** The projection version this process reads from. It follows switches: the API's notification
 * listener and the projector's switch check call `follow` or `refresh`. */
export class ActiveProjection implements ReadSchema {
  constructor(
    readonly versions: ProjectionVersions,
    private current: ProjectionVersion,
  ) {}

  get schema(): string {
    return this.current.schema;
  }

  get version(): number {
    return this.current.version;
  }

  /** Reads from `next` from now on; answers whether that is a change. */
  follow(next: ProjectionVersion): boolean {
    if (next.version === this.current.version) return false;
    this.current = { version: next.version, schema: next.schema };
    return true;
  }

  /** Re-reads the active version; answers whether it changed. */
  async refresh(): Promise<boolean> {
    const active = await this.versions.active();
    return active ? this.follow(active) : false;
  }
}
