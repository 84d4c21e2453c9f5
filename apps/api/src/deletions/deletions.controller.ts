import { ActiveProjection, Database, DeletionsQuery } from '@castlog/read-model';
import { DATABASE } from '@castlog/runtime';
import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../auth/credentials.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { ApiValidationFailedResponse, errorSchema } from '../http/openapi';
import { NotFound } from '../http/errors';
import { positiveInteger } from '../http/parse';
import { openApiSchema, parseWith } from '../http/schema';
import { DELETION_MESSAGES, DeletionStatusBody } from './deletion.presenter';

const DELETION_ID = positiveInteger('id');

@ApiTags('deletions')
@Authenticated()
@Controller('v1/deletions')
export class DeletionsController {
  private readonly query: DeletionsQuery;

  constructor(@Inject(DATABASE) database: Database, readModel: ActiveProjection) {
    this.query = new DeletionsQuery(database.dataSource, readModel);
  }

  @Get(':id')
  @ApiParam({
    name: 'id',
    description: 'The deletion_id a DELETE answered',
    schema: openApiSchema(DELETION_ID),
  })
  @ApiOperation({ summary: 'The status of a deletion' })
  @ApiOkResponse({ type: DeletionStatusBody })
  @ApiValidationFailedResponse()
  @ApiNotFoundResponse({
    description: 'No such deletion for this user',
    schema: errorSchema('404', 'Resource not found'),
  })
  async get(@CurrentUser() userId: string, @Param('id') idParam: string): Promise<DeletionStatusBody> {
    const deletionId = parseWith(DELETION_ID, idParam);
    const status = await this.query.status(userId, deletionId);
    if (!status) throw new NotFound();
    return { deletion_id: deletionId, status, message: DELETION_MESSAGES[status] };
  }
}
