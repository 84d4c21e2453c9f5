import 'reflect-metadata';
import { DELETION_SAGA_FAULTS, DeletionSagaFaults, ProjectorAppModule } from '@castlog/projector';
import { Runtime, serve } from '@castlog/runtime';
import { DynamicModule, Global, Module } from '@nestjs/common';

/** The crash saga-crash.e2e-spec.ts recovers from: the process kills itself (SIGKILL) right after
 * the deletion saga's transaction commits, before it appends the result. */
const crashAfterCascade: DeletionSagaFaults = {
  afterCascade: () => {
    process.kill(process.pid, 'SIGKILL');
  },
};

@Global()
@Module({
  providers: [{ provide: DELETION_SAGA_FAULTS, useValue: crashAfterCascade }],
  exports: [DELETION_SAGA_FAULTS],
})
class CrashAfterCascade {}

@Module({})
class SagaCrashProjectorModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    return {
      module: SagaCrashProjectorModule,
      imports: [CrashAfterCascade, ProjectorAppModule.forRuntime(runtime)],
    };
  }
}

/** The projector (apps/projector/src/main.ts) with the fault above: a test-only entry point, built
 * by tsconfig.build.json (`files`) to dist/test/cross-app/saga-crash.projector.js. */
serve({
  name: 'castlog-projector',
  scaled: true,
  module: (runtime) => SagaCrashProjectorModule.forRuntime(runtime),
  announce: (url, _runtime, logger) =>
    logger.info(`projector (crashing after the saga's cascade) running; health and metrics on ${url}`),
});
