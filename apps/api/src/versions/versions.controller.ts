import { CONFIG, Config } from '@castlog/config';
import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { OPA_SYNC_DRAFT } from '../sync-draft/sync-draft.module';

export class VersionsBody {
  @ApiProperty({
    description: 'One entry per supported major version, at its highest minor version',
    example: ['v1.0'],
    type: [String],
  })
  versions!: string[];
}

export class CapabilitiesBody {
  @ApiProperty({
    description:
      'The optional features this server has enabled, each an object of its settings; a feature that is off is absent',
    example: { opa_sync_draft: OPA_SYNC_DRAFT, gpodder_api: { version: 2 } },
    type: 'object',
    additionalProperties: { type: 'object' },
  })
  capabilities!: Record<string, Record<string, unknown>>;
}

/** The versioning pages of the Open Podcast API: which versions castlog serves and which optional
 * features it has on: none of the specification's optional features yet; the sync draft's face as
 * `opa_sync_draft` (the draft's revision and the face's root), always; and castlog's own
 * gpodder.net face as `gpodder_api` (`{"version": 2}`) while GPODDER_API is on. No credentials: a
 * client asks before it logs in. An unknown major version (`/v2/capabilities`) has no route: 404. */
@ApiTags('versions')
@Controller('v1')
export class VersionsController {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  @Get('versions')
  @ApiOperation({ summary: 'The API versions this server supports' })
  @ApiOkResponse({ type: VersionsBody })
  versions(): VersionsBody {
    return { versions: ['v1.0'] };
  }

  @Get('capabilities')
  @ApiOperation({ summary: 'The optional features this server has enabled, with their settings' })
  @ApiOkResponse({ type: CapabilitiesBody })
  capabilities(): CapabilitiesBody {
    return {
      capabilities: {
        opa_sync_draft: OPA_SYNC_DRAFT,
        ...(this.config.GPODDER_API ? { gpodder_api: { version: 2 } } : {}),
      },
    };
  }
}
