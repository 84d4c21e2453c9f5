/** Injection token of the deletion saga's fault hooks. No production module provides it; a test's
 * module does (a global module exporting it), to crash or fail the saga at a chosen step. */
export const DELETION_SAGA_FAULTS = Symbol('DELETION_SAGA_FAULTS');

export interface DeletionSagaFaults {
  /** Runs after step 1 (the cascade transaction) committed, before step 2 appends the result. */
  afterCascade?(deletionId: number): void | Promise<void>;
}
