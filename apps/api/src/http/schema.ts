import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { z } from 'zod/v4';
import { ValidationFailed } from './errors';

// Each request body and query is declared once, as a zod schema: `parseWith` validates with it and
// `openApiSchema` describes it in the OpenAPI document. The messages are the contract's, word for
// word: the first issue (in the order of the schema's fields, a list before its items) is the
// answer's message, so every part of a schema says its own.

/** Where an issue is: the keys to it, `['actions', 3, 'podcast']`. */
export type IssuePath = readonly PropertyKey[];

/** An issue's message: fixed, or naming where the issue is (`actions[3].podcast must be …`). */
export type Message = string | ((path: IssuePath) => string);

const render = (message: Message, path: IssuePath): string =>
  typeof message === 'string' ? message : message(path);

/** A message naming `subject`, fixed or where the issue is: `actions[3].device must be …`. */
export const sentence = (subject: Message, predicate: string): Message =>
  typeof subject === 'string' ? `${subject} ${predicate}` : (path) => `${subject(path)} ${predicate}`;

/** A path as the messages write it: `actions[3].podcast`. */
export const at = (path: IssuePath): string =>
  path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('');

/** zod's `error` option for `message`: every issue of that part of a schema says it. */
export const says = (message: Message) => ({
  error: (issue: { readonly path?: IssuePath }) => render(message, issue.path ?? []),
});

/** Issues added by `checked` carry their message here; `parseWith` renders it with the full path. */
interface CheckedParams {
  readonly message: Message;
}

/** Renders the messages of the issues `checked` adds, once their path is known. */
const PARSE_PARAMS: z.core.ParseContext<z.core.$ZodIssue> = {
  error: (issue) => {
    const params = issue.params as CheckedParams | undefined;
    return params === undefined ? undefined : render(params.message, issue.path ?? []);
  },
};

/** The value `schema` reads from `value`; otherwise the first issue's message, as ValidationFailed. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value, PARSE_PARAMS);
  if (result.success) return result.data;
  throw new ValidationFailed(result.error.issues[0]?.message ?? 'the request is not valid');
}

/** A value read by a function (the domain's own checks: guids, feed URLs, date-times): `read`
 * answers the value as the request means it, or undefined to refuse it with `message`. Describe it
 * with `.meta()`: a function says nothing to the OpenAPI document. */
export const checked = <T>(read: (value: unknown) => T | undefined, message: Message) =>
  // `any`, not `unknown`: a checked value may follow another schema's output in a pipe.
  z.any().transform((value: unknown, context): T => {
    const read_ = read(value);
    if (read_ !== undefined) return read_;
    const params: CheckedParams = { message };
    // Not `continue`: what follows a refused value (a pipe, an object's transform) is not run.
    context.addIssue({ code: 'custom', input: value, params, continue: false });
    return z.NEVER;
  });

/** A list whose length is judged before its items (a list too long is refused as such whatever its
 * items hold). The OpenAPI document shows the items' schema (see `openApiSchema`). */
export const boundedList = <T extends z.ZodType>(
  items: T,
  limits: { readonly min?: number; readonly max: number },
  messages: { readonly type: Message; readonly min?: Message; readonly max: Message },
) => {
  // `abort`: the items of a list refused for its length are not walked.
  let list = z
    .array(z.unknown(), says(messages.type))
    .max(limits.max, { ...says(messages.max), abort: true });
  if (limits.min !== undefined)
    list = list.min(limits.min, { ...says(messages.min ?? messages.type), abort: true });
  return list.pipe(z.array(items));
};

/** A schema's OpenAPI description: the JSON Schema of the input it accepts. A pipe is described by
 * its input, and a bounded list's input is a list of anything: its items are taken from its output.
 * zod leaves out the default of a value read by a transform; it is the value of an absent one. */
export function openApiSchema(schema: z.core.$ZodType): SchemaObject {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const def = zodSchema._zod.def;
      if (def.type === 'default') jsonSchema.default = def.defaultValue;
      if (def.type !== 'pipe' || def.in._zod.def.type !== 'array' || def.out._zod.def.type !== 'array')
        return;
      jsonSchema.items = openApiSchema(def.out).items as typeof jsonSchema.items;
    },
  });
  delete json.$schema;
  return json as SchemaObject;
}

/** The query parameters of an object schema, each with its description and schema. */
export const ApiQueries = (query: z.ZodObject) =>
  applyDecorators(
    ...Object.entries(query.shape).map(([name, field]) => {
      const { description, ...schema } = openApiSchema(field);
      return ApiQuery({
        name,
        required: !(field as z.ZodType).isOptional(),
        ...(description === undefined ? {} : { description }),
        schema,
      });
    }),
  );
