/** Thrown when the state handed to `decide` breaks an invariant (another user's event, a guid whose
 * subscription was not loaded, a clock that went backwards). A bug in the caller, never a 4xx. */
export class DomainInvariantError extends Error {
  override readonly name = 'DomainInvariantError';
}

/** `message` is built only when the condition fails: the checks run on every decision. */
export const invariant: (condition: boolean, message: () => string) => asserts condition = (
  condition,
  message,
) => {
  if (!condition) throw new DomainInvariantError(message());
};
