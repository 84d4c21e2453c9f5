import { settingsScopeIdOf, SettingsScope } from '@castlog/domain';
import { GpodderQuery } from '@castlog/read-model';
import { applyDecorators, Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppendService } from '../append/append.service';
import { ValidationFailed } from '../http/errors';
import { ApiWriteErrors } from '../http/openapi';
import { ApiQueries, openApiSchema } from '../http/schema';
import { RequestId } from '../http/request-context';
import { GpodderAuthenticated, GpodderIdentity, GpodderUser } from './auth/gpodder-auth';
import { DeviceFirstUse } from './device-first-use';
import { ApiUserParam, GpodderRoute } from './gpodder.openapi';
import { SETTINGS_SCHEMA } from './gpodder.presenter';
import {
  parseSettingsScope,
  parseSettingsUpdate,
  SETTINGS_SCOPE_QUERIES,
  SETTINGS_UPDATE,
  SettingsScopeKindOf,
} from './gpodder.request';

/** The settings of a scope: each key's JSON value. */
export type SettingsBody = Record<string, unknown>;

const SCOPE_NAMES: Record<SettingsScopeKindOf, string> = {
  account: 'the account',
  device: 'a device',
  podcast: 'a podcast',
  episode: 'an episode',
};

/** The OpenAPI description of a scope's GET (`write` false) or POST. */
const ApiSettings = (kind: SettingsScopeKindOf, write: boolean) =>
  applyDecorators(
    GpodderRoute(),
    ApiUserParam(),
    ApiQueries(SETTINGS_SCOPE_QUERIES[kind]),
    ApiOperation(
      write
        ? {
            summary: `Change the settings of ${SCOPE_NAMES[kind]} (gpodder.net)`,
            description:
              'Sets the keys of `set`, then removes those of `remove` (a key in both ends removed), in one change, ' +
              'and answers the settings the scope then holds. A scope holds at most 100 keys: a change that would ' +
              'leave more is 400 and changes nothing. The body is read as JSON whatever its Content-Type.',
          }
        : {
            summary: `The settings of ${SCOPE_NAMES[kind]} (gpodder.net)`,
            description: 'Each key with its JSON value; `{}` when the scope holds none.',
          },
    ),
    ApiOkResponse({ schema: SETTINGS_SCHEMA }),
    ...(write
      ? [HttpCode(200), ApiBody({ schema: openApiSchema(SETTINGS_UPDATE) }), ApiWriteErrors(true)]
      : kind === 'device'
        ? [ApiWriteErrors(false)]
        : []),
  );

/** gpodder.net's settings: key-value pairs stored per account, device, podcast or episode, each
 * change an event through the decider. A device scope's device is created by its first use, as on
 * every route that names a device; podcasts and episodes are named by their URLs as sent. */
@ApiTags('gpodder')
@GpodderAuthenticated()
@Controller('api/2/settings/:user')
export class GpodderSettingsController {
  constructor(
    @Inject(GpodderQuery) private readonly query: GpodderQuery,
    @Inject(AppendService) private readonly append: AppendService,
    @Inject(DeviceFirstUse) private readonly devices: DeviceFirstUse,
  ) {}

  @Get('account.json')
  @ApiSettings('account', false)
  account(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.read(user, id, 'account', query);
  }

  @Get('device.json')
  @ApiSettings('device', false)
  device(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.read(user, id, 'device', query);
  }

  @Get('podcast.json')
  @ApiSettings('podcast', false)
  podcast(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.read(user, id, 'podcast', query);
  }

  @Get('episode.json')
  @ApiSettings('episode', false)
  episode(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.read(user, id, 'episode', query);
  }

  @Post('account.json')
  @ApiSettings('account', true)
  changeAccount(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Query() query: Record<string, unknown>,
    @Body() body: string,
  ) {
    return this.change(user, id, 'account', query, body);
  }

  @Post('device.json')
  @ApiSettings('device', true)
  changeDevice(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Query() query: Record<string, unknown>,
    @Body() body: string,
  ) {
    return this.change(user, id, 'device', query, body);
  }

  @Post('podcast.json')
  @ApiSettings('podcast', true)
  changePodcast(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Query() query: Record<string, unknown>,
    @Body() body: string,
  ) {
    return this.change(user, id, 'podcast', query, body);
  }

  @Post('episode.json')
  @ApiSettings('episode', true)
  changeEpisode(
    @GpodderUser() user: GpodderIdentity,
    @RequestId() id: string,
    @Query() query: Record<string, unknown>,
    @Body() body: string,
  ) {
    return this.change(user, id, 'episode', query, body);
  }

  /** The scope's settings; a device scope's device is created first if need be. */
  private async read(
    user: GpodderIdentity,
    requestId: string,
    kind: SettingsScopeKindOf,
    query: Record<string, unknown>,
  ): Promise<SettingsBody> {
    const scope = parseSettingsScope(kind, query);
    if (scope.kind === 'device') await this.devices.ensure(user.id, scope.deviceId, requestId);
    return this.settingsOf(user, scope);
  }

  /** One change, one event; once it is applied, the settings the scope holds then (a change another
   * request made since included). */
  private async change(
    user: GpodderIdentity,
    requestId: string,
    kind: SettingsScopeKindOf,
    query: Record<string, unknown>,
    body: string | undefined,
  ): Promise<SettingsBody> {
    const scope = parseSettingsScope(kind, query);
    const { set, remove } = parseSettingsUpdate(body ?? '');
    const outcome = await this.append.request(
      { type: 'SettingsUpdateRequested', userId: user.id, scope, set, remove },
      requestId,
    );
    if (outcome.kind === 'SettingsRefused') throw new ValidationFailed(outcome.message);
    return this.settingsOf(user, scope);
  }

  private settingsOf(user: GpodderIdentity, scope: SettingsScope): Promise<SettingsBody> {
    return this.query.settings(user.id, settingsScopeIdOf(scope));
  }
}
