import { checkUserName } from '@castlog/auth';
import { ApiProperty } from '@nestjs/swagger';
import { ValidationFailed } from '../http/errors';
import { parseBodyObject } from '../http/parse';

/** Body of `POST /v1/auth/login`. */
export class LoginRequest {
  @ApiProperty({ example: 'alice' })
  readonly username!: string;

  @ApiProperty({ example: 'correct horse battery staple', format: 'password' })
  readonly password!: string;
}

/** Body of `POST /v1/auth/refresh`. */
export class RefreshRequest {
  @ApiProperty({ description: 'The refresh_token of an earlier login or refresh' })
  readonly refresh_token!: string;
}

function requireString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string') throw new ValidationFailed(`${field} must be a string`);
  return value;
}

/** Checks the shape of a login body; 405 otherwise. Unknown fields are ignored. */
export function parseLoginRequest(body: unknown): LoginRequest {
  const object = parseBodyObject(body);
  return { username: requireString(object, 'username'), password: requireString(object, 'password') };
}

/** Checks the shape of a refresh body; 405 otherwise. Unknown fields are ignored. */
export function parseRefreshRequest(body: unknown): RefreshRequest {
  return { refresh_token: requireString(parseBodyObject(body), 'refresh_token') };
}

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
