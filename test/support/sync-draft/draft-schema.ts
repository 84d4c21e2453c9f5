import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

// The sync draft's own schema (schema.yml beside this file, as the draft publishes it), for checking
// castlog's answers against it: a schema of its components by name, or of a route's answer.

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
// The draft's `url`: an absolute URL, or one relative to the server (its refresh_endpoint is
// `/auth/refresh`).
ajv.addFormat('url', (value: string) => !/\s/.test(value) && URL.canParse(value, 'http://server.invalid/'));
ajv.addSchema(parse(readFileSync(join(__dirname, 'schema.yml'), 'utf8')) as object, 'draft');

const escape = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
const validators = new Map<string, ValidateFunction>();

const errorsAt = (pointer: string, value: unknown): string | undefined => {
  let validate = validators.get(pointer);
  if (validate === undefined) {
    validate = ajv.getSchema(`draft#${pointer}`);
    if (validate === undefined) throw new Error(`schema.yml has no schema at ${pointer}`);
    validators.set(pointer, validate);
  }
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
};

/** Why `value` does not match the draft's component schema `name` (`PersistedSubscription`, say);
 * undefined when it does. */
export const draftSchemaErrors = (name: string, value: unknown): string | undefined =>
  errorsAt(`/components/schemas/${name}`, value);

/** Why `value` does not match the draft's schema of the JSON answer of `method path` with `status`;
 * undefined when it does. */
export const draftAnswerErrors = (
  method: string,
  path: string,
  status: number,
  value: unknown,
): string | undefined =>
  errorsAt(
    `/paths/${escape(path)}/${method.toLowerCase()}/responses/${status}/content/${escape('application/json')}/schema`,
    value,
  );
