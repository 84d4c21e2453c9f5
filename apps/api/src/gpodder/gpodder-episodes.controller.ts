import { toUnixSeconds } from '@castlog/domain';
import { GpodderQuery } from '@castlog/read-model';
import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { ApiWriteErrors } from '../http/openapi';
import { ApiQueries, openApiSchema } from '../http/schema';
import { RequestId } from '../http/request-context';
import { GpodderAuthenticated, GpodderIdentity, GpodderUser } from './auth/gpodder-auth';
import { ApiUserParam, GpodderRoute, GpodderUploadRoute } from './gpodder.openapi';
import {
  EPISODE_ACTIONS_RESULT_SCHEMA,
  EPISODE_ACTIONS_SCHEMA,
  EpisodeActionBody,
  presentEpisodeAction,
} from './gpodder.presenter';
import {
  EPISODE_ACTIONS,
  EPISODE_ACTIONS_QUERY,
  parseEpisodeActions,
  parseEpisodeActionsQuery,
} from './gpodder.request';

export interface EpisodeActionsUploadBody {
  readonly timestamp: number;
  readonly update_urls: readonly [string, string][];
}

export interface EpisodeActionsBody {
  readonly actions: EpisodeActionBody[];
  readonly timestamp: number;
}

/** gpodder.net's episode actions (download, play, delete, new, flattr): uploads, recorded as received, and
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
      'A JSON list of actions, recorded in order as one change. A podcast URL loses the white space around it, ' +
      'as gpodder.net trims it, and is reported `[sent, trimmed]` in update_urls. An action without a timestamp gets the time ' +
      'it was received; a timestamp with an offset or a fraction is kept in UTC, to the second. started, ' +
      'position and total (seconds) belong to play actions and are dropped from any other. A device an action ' +
      'names is created by that first use. The body is read as JSON whatever its Content-Type.',
  })
  @ApiBody({ schema: openApiSchema(EPISODE_ACTIONS) })
  @ApiOkResponse({ schema: EPISODE_ACTIONS_RESULT_SCHEMA })
  @ApiWriteErrors(true)
  async upload(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() requestId: string,
    @Body() body: string,
  ): Promise<EpisodeActionsUploadBody> {
    const { actions, updateUrls } = parseEpisodeActions(body ?? '');
    const outcome = await this.append.request(
      { type: 'EpisodeActionsUploaded', userId: user.id, actions },
      requestId,
    );
    return { timestamp: toUnixSeconds(outcome.clock), update_urls: updateUrls };
  }

  @Get(':user.json')
  @GpodderRoute()
  @ApiUserParam()
  @ApiQueries(EPISODE_ACTIONS_QUERY)
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
