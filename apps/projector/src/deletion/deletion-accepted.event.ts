/** Published in process after the projector committed a batch that accepted a deletion. */
export class DeletionAcceptedEvent {
  constructor(
    readonly userId: string,
    readonly deletionId: number,
  ) {}
}
