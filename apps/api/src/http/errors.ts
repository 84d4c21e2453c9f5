/** The exceptions every castlog HTTP app answers with the error body, as the API's modules import
 * them (the error filter that maps them lives in @castlog/http). */
export { Gone, NotFound, TooManyRequests, Unavailable, ValidationFailed } from '@castlog/http';
