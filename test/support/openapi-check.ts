import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

export interface RecordedResponse {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
  /** The answer's media type, without parameters (`text/x-opml`). */
  readonly mediaType?: string;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema?: object }> }> }>
  >;
  components?: { schemas?: Record<string, object> };
}

const templateToRegExp = (template: string) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);

/** Checks recorded answers against the served OpenAPI document: each answer of a documented route
 * must have its status documented, and a JSON body must validate against that status's schema.
 * Answers the mismatches (empty when all conform). */
export function checkAgainstOpenApi(
  document: OpenApiDocument,
  responses: readonly RecordedResponse[],
): string[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('url', /^https?:\/\/\S+$/i);
  ajv.addFormat('password', /.*/);
  ajv.addSchema({ components: document.components ?? {} }, 'openapi');
  const routes = Object.entries(document.paths).map(([template, operations]) => ({
    pattern: templateToRegExp(template),
    template,
    operations,
  }));
  const validators = new Map<string, ValidateFunction>();
  const problems: string[] = [];
  for (const response of responses) {
    const pathname = new URL(response.path, 'http://x').pathname;
    const route = routes.find((r) => r.pattern.test(pathname));
    const operation = route?.operations[response.method.toLowerCase()];
    if (!route || !operation) continue;
    const where = `${response.method} ${route.template} → ${response.status}`;
    const documented = operation.responses?.[String(response.status)];
    if (!documented) {
      problems.push(`${where}: status not documented`);
      continue;
    }
    const schema = documented.content?.['application/json']?.schema;
    // A body of another media type (OPML, text) is documented when its media type is.
    if (!schema && response.mediaType !== undefined && documented.content?.[response.mediaType]) continue;
    if (!schema) {
      if (response.body !== undefined && response.body !== '') problems.push(`${where}: body not documented`);
      continue;
    }
    const key = `${where}`;
    let validate = validators.get(key);
    if (!validate) {
      const rewritten = JSON.parse(
        JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/'),
      );
      validate = ajv.compile(rewritten);
      validators.set(key, validate);
    }
    if (!validate(response.body)) {
      problems.push(
        `${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(response.body).slice(0, 300)}`,
      );
    }
  }
  return [...new Set(problems)];
}
