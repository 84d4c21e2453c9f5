import { Runtime, RuntimeModule } from '@castlog/runtime';
import { DynamicModule, Module } from '@nestjs/common';
import { ResolverModule } from './resolver.module';

@Module({})
export class ResolverAppModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    return { module: ResolverAppModule, imports: [RuntimeModule.forRoot(runtime), ResolverModule] };
  }
}
