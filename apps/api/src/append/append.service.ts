import { CONFIG, Config } from '@castlog/config';
import { isOutcomeOf, LogEvent, OutcomeOf } from '@castlog/domain';
import { envelopeOf, EventLog } from '@castlog/event-log';
import { ActiveProjection, Database, LocalCommits } from '@castlog/read-model';
import { DATABASE, EVENT_LOG, Metrics } from '@castlog/runtime';
import { DependencyHealth } from '@castlog/supervision';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Unavailable } from '../http/errors';
import { OffsetWaiter } from './offset-waiter';

/** The write path: append the request as an event, wait until the projector has applied it
 * (read-your-writes), and answer the outcome it stored. */
@Injectable()
export class AppendService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(AppendService.name);
  private readonly waiter: OffsetWaiter;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(DATABASE) database: Database,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    readModel: ActiveProjection,
    private readonly metrics: Metrics,
    health: DependencyHealth,
    commits: LocalCommits,
  ) {
    this.waiter = new OffsetWaiter(database.url, database.dataSource, readModel, health, commits);
  }

  onModuleInit(): Promise<void> {
    return this.waiter.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.waiter.close();
  }

  /** Answers the outcome the projector stored for `event`, typed by the event (a POST's is `Added`,
   * a PATCH's `Updated`, `NotFound` or `Gone`...): the stored outcome is the one `decide` answered
   * for the record at that position, and is checked to be one the event can have. */
  async request<E extends LogEvent>(event: E, requestId: string): Promise<OutcomeOf<E>> {
    const retryAfter = this.config.RETRY_AFTER_SECONDS;
    let position;
    const envelope = envelopeOf(event, requestId);
    const appendTimer = this.metrics.appendDuration.startTimer();
    try {
      [position] = await this.eventLog.append([envelope]);
    } catch (error) {
      this.logger.warn(`append failed for request ${requestId}: ${String(error)}`);
      throw new Unavailable(retryAfter, 'the event log cannot be reached');
    } finally {
      appendTimer();
    }
    if (!position) throw new Unavailable(retryAfter);
    const waitTimer = this.metrics.readYourWritesWait.startTimer();
    const outcome = await this.waiter.outcomeOf(
      position.partition,
      position.offset,
      this.config.READ_YOUR_WRITES_TIMEOUT,
      envelope.eventId,
    );
    waitTimer({ result: outcome === 'timed-out' || outcome === 'unknown' ? 'timed_out' : 'applied' });
    if (outcome === 'timed-out') {
      throw new Unavailable(retryAfter, 'the request was recorded and will apply, but not yet');
    }
    // The projection passed the position, but reading what it stored there failed until the
    // deadline: a passing database error, not lost data.
    if (outcome === 'unknown') {
      this.logger.warn(
        `request ${requestId}: the outcome of event ${envelope.eventId} at ${position.partition}:${position.offset} ` +
          'could not be read in time',
      );
      throw new Unavailable(retryAfter, 'the request was recorded, but its outcome is not yet known');
    }
    // The projection passed the position without an outcome of this event: the record there is
    // another one (the log lost the one it had acknowledged, as a broker's unclean restart can).
    // Never answer another request's outcome.
    if (outcome === 'missing') {
      this.logger.error(
        `request ${requestId}: no outcome of event ${envelope.eventId} at ${position.partition}:${position.offset} ` +
          'although the projection has passed it',
      );
      throw new Unavailable(retryAfter, 'the event log lost the request; send it again');
    }
    if (!isOutcomeOf(event, outcome)) throw new Unavailable(retryAfter, `unexpected outcome ${outcome.kind}`);
    return outcome;
  }
}
