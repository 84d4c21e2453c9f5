import { Module } from '@nestjs/common';
import { FeedResolverService } from './feed-resolver.service';

/** The feed resolver. Expects RuntimeModule (config, database, log, the feed catalog). */
@Module({ providers: [FeedResolverService] })
export class ResolverModule {}
