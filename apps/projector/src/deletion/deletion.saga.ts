import { Injectable } from '@nestjs/common';
import { ICommand, IEvent, ofType, Saga } from '@nestjs/cqrs';
import { map, Observable } from 'rxjs';
import { DeletionAcceptedEvent } from './deletion-accepted.event';
import { FinalizeDeletionCommand } from './finalize-deletion.command';

@Injectable()
export class DeletionSaga {
  @Saga()
  deletionAccepted = (events$: Observable<IEvent>): Observable<ICommand> =>
    events$.pipe(
      ofType(DeletionAcceptedEvent),
      map((event) => new FinalizeDeletionCommand(event.userId, event.deletionId)),
    );
}
