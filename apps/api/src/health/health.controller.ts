import { EventLog } from '@castlog/event-log';
import { Database } from '@castlog/read-model';
import { DATABASE, EVENT_LOG } from '@castlog/runtime';
import { Controller, Get, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Unavailable } from '../http/errors';

@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    @Inject(DATABASE) private readonly database: Database,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
  ) {}

  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** Ready when the read model answers and the event log answers. */
  @Get('ready')
  async ready() {
    try {
      await this.database.dataSource.query('SELECT 1');
      await this.eventLog.endOffsets();
    } catch (error) {
      throw new Unavailable(5, error instanceof Error ? error.message : String(error));
    }
    return { status: 'ok' };
  }
}
