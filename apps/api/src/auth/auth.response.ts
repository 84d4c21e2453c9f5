import { ApiProperty } from '@nestjs/swagger';
import type { TokenResponse as IssuedTokens } from '@castlog/auth';

/** Answer of `POST /v1/auth/login` and `POST /v1/auth/refresh`. */
export class TokenResponse implements IssuedTokens {
  @ApiProperty({
    description: 'Bearer token for the /v1 routes',
    example: 'cl_q3Jt0n2m6YbSxD1aZbE4v8gWcJkLpQrStUvWxYz0123',
  })
  readonly access_token!: string;

  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' })
  readonly token_type!: 'Bearer';

  @ApiProperty({ description: 'Lifetime of the access token in seconds', example: 3600 })
  readonly expires_in!: number;

  @ApiProperty({
    description: 'Single-use token for POST /v1/auth/refresh; using it revokes it',
    example: 'cl_Zx9yW8vU7tS6rQ5pO4nM3lK2jI1hG0fEdCbA98765432',
  })
  readonly refresh_token!: string;
}

export { errorSchema } from '../http/openapi';
