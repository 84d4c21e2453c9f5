import { Config } from '@castlog/config';
import { HttpAppOptions, OpenApiDocument } from '@castlog/http';
import { addAuthSecuritySchemes } from '../auth/credentials.guard';

/** The API's OpenAPI document: its title, and the Bearer and Basic security schemes. */
export const API_DOCUMENT: OpenApiDocument = (builder) =>
  addAuthSecuritySchemes(
    builder
      .setTitle('castlog')
      .setDescription('Open Podcast API subscriptions, event-sourced. Errors answer {"code","message"}.')
      .setVersion('1'),
  );

/** The API's HTTP app beside its routes: the OpenAPI document, and CORS for browser-based clients
 * (every origin on the gpodder.net face, CORS_ORIGINS on the Open Podcast API's). */
export const apiHttpOptions = (config: Config): HttpAppOptions => ({
  openApi: API_DOCUMENT,
  corsOrigins: config.CORS_ORIGINS,
});
