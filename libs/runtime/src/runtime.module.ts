import { CONFIG, Config } from '@castlog/config';
import { EventLog } from '@castlog/event-log';
import { FeedCatalog, ResolverProgress } from '@castlog/feeds';
import { ActiveProjection, Database, LocalCommits } from '@castlog/read-model';
import { OperationsModule, OperationsReport, RequestMetrics } from '@castlog/http';
import { DependencyHealth } from '@castlog/supervision';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Metrics, ProcessReport, ProjectionStatus } from './operations';
import { DATABASE, EVENT_LOG } from './tokens';

export interface Runtime {
  readonly config: Config;
  readonly database: Database;
  /** The projection version reads are served from. */
  readonly readModel: ActiveProjection;
  readonly eventLog: EventLog;
  /** What this process's supervised connections report. */
  readonly health: DependencyHealth;
}

/** Makes the opened configuration, database and event log injectable everywhere, with the feed
 * catalog, the process's metrics and the operations routes (/health, /metrics) that report them. Opening and
 * closing them is the entry point's job, so a module never owns what outlives it. The process's
 * LocalCommits is one for all its modules. */
@Global()
@Module({})
export class RuntimeModule {
  static forRoot(runtime: Runtime): DynamicModule {
    return {
      module: RuntimeModule,
      imports: [OperationsModule],
      providers: [
        { provide: CONFIG, useValue: runtime.config },
        { provide: DATABASE, useValue: runtime.database },
        { provide: DataSource, useValue: runtime.database.dataSource },
        { provide: EVENT_LOG, useValue: runtime.eventLog },
        { provide: ActiveProjection, useValue: runtime.readModel },
        { provide: DependencyHealth, useValue: runtime.health },
        { provide: LocalCommits, useValue: new LocalCommits() },
        Metrics,
        ProjectionStatus,
        { provide: FeedCatalog, useValue: new FeedCatalog(runtime.database.dataSource, runtime.readModel) },
        { provide: ResolverProgress, useValue: new ResolverProgress() },
        { provide: RequestMetrics, useExisting: Metrics },
        { provide: OperationsReport, useClass: ProcessReport },
      ],
      exports: [
        CONFIG,
        DATABASE,
        DataSource,
        EVENT_LOG,
        ActiveProjection,
        DependencyHealth,
        LocalCommits,
        Metrics,
        ProjectionStatus,
        FeedCatalog,
        ResolverProgress,
        RequestMetrics,
        OperationsReport,
      ],
    };
  }
}
