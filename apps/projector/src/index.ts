export * from './projector.module';
export * from './projector-app.module';
export * from './deletion/deletion-saga.faults';
export * from './deletion/finalize-deletion.command';
