export * from './projection';
export * from './projector.module';
export * from './deletion/finalize-deletion.command';
