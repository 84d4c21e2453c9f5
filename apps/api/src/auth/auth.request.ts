import { checkUserName } from '@castlog/auth';
import { z } from 'zod/v4';
import { parseBody } from '../http/parse';
import { says } from '../http/schema';

/** `POST /v1/auth/login`. Unknown fields are ignored. */
export const LOGIN_REQUEST = z.object({
  username: z.string(says('username must be a string')).meta({ example: 'alice' }),
  password: z
    .string(says('password must be a string'))
    .meta({ example: 'correct horse battery staple', format: 'password' }),
});

/** `POST /v1/auth/refresh`. Unknown fields are ignored. */
export const REFRESH_REQUEST = z.object({
  refresh_token: z
    .string(says('refresh_token must be a string'))
    .meta({ description: 'The refresh_token of an earlier login or refresh' }),
});

/** Checks the shape of a login body; 405 otherwise. */
export const parseLoginRequest = (body: unknown): z.output<typeof LOGIN_REQUEST> =>
  parseBody(LOGIN_REQUEST, body);

/** Checks the shape of a refresh body; 405 otherwise. */
export const parseRefreshRequest = (body: unknown): z.output<typeof REFRESH_REQUEST> =>
  parseBody(REFRESH_REQUEST, body);

/** False for a name no user can have (`checkUserName`: control characters, white space, colons,
 * over 128 characters). Such a name is answered like an unknown user without asking the database,
 * which refuses some of them (a NUL is not valid in PostgreSQL text: the query would fail, a 500). */
export function isPossibleUserName(name: string): boolean {
  try {
    checkUserName(name);
    return true;
  } catch {
    return false;
  }
}
