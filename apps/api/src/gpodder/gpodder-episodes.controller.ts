import { toUnixSeconds } from '@castlog/domain';
import { GpodderQuery } from '@castlog/read-model';
import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { ApiWriteErrors } from '../http/openapi';
import { RequestId } from '../http/request-context';
import { GpodderAuthenticated, GpodderIdentity, GpodderUser } from './auth/gpodder-auth';
import { ApiUserParam, GpodderRoute, GpodderUploadRoute } from './gpodder.openapi';
import {
  EPISODE_ACTIONS_RESULT_SCHEMA,
  EPISODE_ACTIONS_SCHEMA,
  EPISODE_ACTIONS_UPLOAD_SCHEMA,
  EpisodeActionBody,
  presentEpisodeAction,
} from './gpodder.presenter';
import { parseEpisodeActions, parseEpisodeActionsQuery } from './gpodder.request';

export interface EpisodeActionsUploadBody {
  readonly timestamp: number;
  readonly update_urls: readonly [string, string][];
}

export interface EpisodeActionsBody {
  readonly actions: EpisodeActionBody[];
  readonly timestamp: number;
}

/** gpodder.net's episode actions (download, play, delete, new): uploads, recorded as received, and
 * downloads of those received since a timestamp. */
@ApiTags('gpodder')
@GpodderAuthenticated()
@Controller('api/2/episodes')
export class GpodderEpisodesController {
  constructor(
    @Inject(GpodderQuery) private readonly query: GpodderQuery,
    @Inject(AppendService) private readonly append: AppendService,
  ) {}

  @Post(':user.json')
  @HttpCode(200)
  @GpodderUploadRoute()
  @ApiUserParam()
  @ApiOperation({
    summary: 'Upload episode actions (gpodder.net)',
    description:
      'A JSON list of actions, recorded in order as one change. An action without a timestamp gets the time ' +
      'it was received; a timestamp with an offset or a fraction is kept in UTC, to the second. started, ' +
      'position and total (seconds) belong to play actions and are dropped from any other. A device an action ' +
      'names is created by that first use. The body is read as JSON whatever its Content-Type.',
  })
  @ApiBody({ schema: EPISODE_ACTIONS_UPLOAD_SCHEMA })
  @ApiOkResponse({ schema: EPISODE_ACTIONS_RESULT_SCHEMA })
  @ApiWriteErrors(true)
  async upload(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() requestId: string,
    @Body() body: string,
  ): Promise<EpisodeActionsUploadBody> {
    const actions = parseEpisodeActions(body ?? '');
    const outcome = await this.append.request(
      { type: 'EpisodeActionsUploaded', userId: user.id, actions },
      requestId,
    );
    return { timestamp: toUnixSeconds(outcome.clock), update_urls: [] };
  }

  @Get(':user.json')
  @GpodderRoute()
  @ApiUserParam()
  @ApiQuery({
    name: 'since',
    required: false,
    description: 'Unix seconds, inclusive: actions received at or after it. Absent or 0: all of them.',
    schema: { type: 'integer', minimum: 0 },
  })
  @ApiQuery({ name: 'podcast', required: false, description: 'Only the actions of this feed URL' })
  @ApiQuery({
    name: 'device',
    required: false,
    description: 'Only the actions uploaded naming this device (a filter: no device is created)',
  })
  @ApiQuery({
    name: 'aggregated',
    required: false,
    description: 'true: only the latest action of each episode',
    schema: { type: 'string', enum: ['true', 'false', '1', '0'] },
  })
  @ApiOperation({ summary: 'Download episode actions (gpodder.net)' })
  @ApiOkResponse({ schema: EPISODE_ACTIONS_SCHEMA })
  async download(
    @GpodderUser() user: GpodderIdentity,
    @Query() query: Record<string, unknown>,
  ): Promise<EpisodeActionsBody> {
    const { since, podcast, device, aggregated } = parseEpisodeActionsQuery(query);
    const result = await this.query.episodeActions(user.id, {
      since: since === null ? 0 : since * 1000,
      ...(podcast === undefined ? {} : { podcast }),
      ...(device === undefined ? {} : { device }),
      aggregated,
    });
    return { actions: result.actions.map(presentEpisodeAction), timestamp: toUnixSeconds(result.clock) };
  }
}
