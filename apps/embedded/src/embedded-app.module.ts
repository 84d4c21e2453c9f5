import { ApiModule } from '@castlog/api';
import { ProjectorModule } from '@castlog/projector';
import { ResolverModule } from '@castlog/resolver';
import { Runtime, RuntimeModule } from '@castlog/runtime';
import { DynamicModule, Module } from '@nestjs/common';

/** API, projector, deletion saga and feed resolver in one process. */
@Module({})
export class EmbeddedAppModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    return {
      module: EmbeddedAppModule,
      imports: [RuntimeModule.forRoot(runtime), ApiModule, ProjectorModule, ResolverModule],
    };
  }
}
