import { OpenApiDocument } from '@castlog/http';
import { addAuthSecuritySchemes } from '../auth/credentials.guard';

/** The API's OpenAPI document: its title, and the Bearer and Basic security schemes. */
export const API_DOCUMENT: OpenApiDocument = (builder) =>
  addAuthSecuritySchemes(
    builder
      .setTitle('castlog')
      .setDescription('Open Podcast API subscriptions, event-sourced. Errors answer {"code","message"}.')
      .setVersion('1'),
  );
