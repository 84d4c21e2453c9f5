import { Busboy } from '@fastify/busboy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationFailed } from './errors';

/** A file sent in a `multipart/form-data` form. */
export interface FormFile {
  readonly field: string;
  readonly filename: string;
  readonly content: Buffer;
}

/** The fields and files of an HTML form, as a `formBody` route's handler receives them. A field
 * sent more than once keeps its first value. */
export class FormBody {
  constructor(
    private readonly fields: ReadonlyMap<string, string>,
    readonly files: readonly FormFile[],
  ) {}

  /** The field's value, or '' when the form did not send it. */
  text(name: string): string {
    return this.fields.get(name) ?? '';
  }

  file(field: string): FormFile | undefined {
    return this.files.find((file) => file.field === field);
  }
}

/** The media type a `formBody` route's request is parsed as; its own is kept in ORIGINAL_TYPE. */
const FORM_BODY_TYPE = 'application/x-castlog-form-body';
const ORIGINAL_TYPE = Symbol('castlog.originalContentType');
const FORM_TYPES = /^(application\/x-www-form-urlencoded|multipart\/form-data)\s*(;|$)/i;
/** No form castlog serves has more fields than this, or names longer than this. */
const MAX_FIELDS = 50;
const MAX_FIELD_NAME_BYTES = 100;
const MAX_FILES = 1;

type WithOriginalType = FastifyRequest & { [ORIGINAL_TYPE]?: string };

/** Routes with the `formBody` option (CastlogRoute) get their body as a FormBody (`readAsForm`),
 * parsed by busboy from the bytes the body limit let through; a body that is not a form (or none)
 * is refused as invalid input. Every other route keeps its parsing, so no other face starts
 * reading forms. */
export function readFormBodies(fastify: FastifyInstance): void {
  fastify.addContentTypeParser(FORM_BODY_TYPE, { parseAs: 'buffer' }, (request, body, done) => {
    const type = (request as WithOriginalType)[ORIGINAL_TYPE] ?? '';
    if (!FORM_TYPES.test(type)) return done(new ValidationFailed('the body must be an HTML form'), undefined);
    parseForm(type, body as Buffer).then(
      (form) => done(null, form),
      (error: unknown) =>
        done(new ValidationFailed(`the form could not be read: ${(error as Error).message}`), undefined),
    );
  });
}

/** Has a `formBody` route's request read by the form parser, its own Content-Type kept for it. */
export function readAsForm(request: FastifyRequest): void {
  (request as WithOriginalType)[ORIGINAL_TYPE] = request.headers['content-type'] ?? '';
  request.headers['content-type'] = FORM_BODY_TYPE;
}

/** A form's fields (UTF-8) and files, within the field and file counts above; a field value is
 * bounded only by the body limit. */
function parseForm(contentType: string, body: Buffer): Promise<FormBody> {
  return new Promise((resolve, reject) => {
    const fields = new Map<string, string>();
    const files: FormFile[] = [];
    const parser = Busboy({
      headers: { 'content-type': contentType },
      defCharset: 'utf8',
      limits: {
        fields: MAX_FIELDS,
        files: MAX_FILES,
        fieldNameSize: MAX_FIELD_NAME_BYTES,
        fieldSize: body.length,
        fileSize: body.length,
      },
    });
    parser.on('field', (name, value) => {
      if (!fields.has(name)) fields.set(name, value);
    });
    parser.on('file', (field, stream, filename) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => files.push({ field, filename, content: Buffer.concat(chunks) }));
    });
    for (const limit of ['fieldsLimit', 'filesLimit', 'partsLimit'] as const)
      parser.on(limit, () => reject(new Error('too many fields or files')));
    parser.on('error', reject);
    parser.on('finish', () => resolve(new FormBody(fields, files)));
    parser.end(body);
  });
}
