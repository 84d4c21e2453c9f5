import { Runtime, RuntimeModule } from '@castlog/runtime';
import { DynamicModule, Module } from '@nestjs/common';
import { ApiModule } from './api.module';

@Module({})
export class ApiAppModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    return { module: ApiAppModule, imports: [RuntimeModule.forRoot(runtime), ApiModule] };
  }
}
