import { HttpException } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';

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

/** 405 with the contract's validation message and a detail. */
export const invalidInput = (detail: string): HttpException =>
  new HttpException({ code: '405', message: `Input could not be validated: ${detail}` }, 405);

function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidInput('body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

function requireString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string') throw invalidInput(`${field} must be a string`);
  return value;
}

/** Checks the shape of a login body; 405 otherwise. Unknown fields are ignored. */
export function parseLoginRequest(body: unknown): LoginRequest {
  const object = requireObject(body);
  return { username: requireString(object, 'username'), password: requireString(object, 'password') };
}

/** Checks the shape of a refresh body; 405 otherwise. Unknown fields are ignored. */
export function parseRefreshRequest(body: unknown): RefreshRequest {
  return { refresh_token: requireString(requireObject(body), 'refresh_token') };
}
