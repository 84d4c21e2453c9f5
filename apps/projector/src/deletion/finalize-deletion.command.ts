import { Command } from '@nestjs/cqrs';

/** DEFERRED: the database or the log was out of reach, or the process is stopping; the deletion
 * stays as it was (pending, or its result recorded but not in the log) for the recovery sweep. */
export type FinalizeDeletionResult = 'COMPLETED' | 'FAILED' | 'ALREADY_FINALIZED' | 'DEFERRED';

export class FinalizeDeletionCommand extends Command<FinalizeDeletionResult> {
  constructor(
    readonly userId: string,
    readonly deletionId: number,
  ) {
    super();
  }
}
