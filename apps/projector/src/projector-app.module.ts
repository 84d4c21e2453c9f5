import { Runtime, RuntimeModule } from '@castlog/runtime';
import { DynamicModule, Module } from '@nestjs/common';
import { ProjectorModule } from './projector.module';

@Module({})
export class ProjectorAppModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    return { module: ProjectorAppModule, imports: [RuntimeModule.forRoot(runtime), ProjectorModule] };
  }
}
