import { Command } from '@nestjs/cqrs';

export type FinalizeDeletionResult = 'COMPLETED' | 'FAILED' | 'ALREADY_FINALIZED';

export class FinalizeDeletionCommand extends Command<FinalizeDeletionResult> {
  constructor(
    readonly userId: string,
    readonly deletionId: number,
  ) {
    super();
  }
}
