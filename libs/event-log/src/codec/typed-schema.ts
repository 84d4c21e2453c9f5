import type { SchemaObject } from 'ajv';

// JSON Schemas that carry the TypeScript type of the values they accept, so that the compiler can
// hold a schema against the type it describes (see `Exact`). Only what the event schemas use.

declare const accepts: unique symbol;

/** A JSON Schema accepting values of type T. */
export interface TypedSchema<T> {
  readonly json: SchemaObject;
  /** Never set: T for the compiler (`Accepted`). */
  readonly [accepts]?: T;
}

/** The type of the values `S` accepts. */
export type Accepted<S> = S extends TypedSchema<infer T> ? T : never;

export type Shape = Readonly<Record<string, TypedSchema<unknown>>>;

/** An intersection written out as one object type, as the types it is compared with are. */
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** True when A and B are the same type, readonly and optional properties included: each is
 * assignable to the other is not enough, as `{ a?: string }` and `{}` are. */
export type Exact<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

const typed = <T>(json: SchemaObject): TypedSchema<T> => ({ json });

export const string = (json: SchemaObject = {}) => typed<string>({ type: 'string', ...json });
export const integer = (json: SchemaObject = {}) => typed<number>({ type: 'integer', ...json });
export const boolean = () => typed<boolean>({ type: 'boolean' });
/** Any JSON value: what a client sent, kept for the decider to judge. */
export const anything = () => typed<unknown>({});
export const constant = <const L extends string>(value: L) => typed<L>({ const: value });
export const oneOf = <const V extends string>(values: readonly V[]) => typed<V>({ enum: [...values] });

export const list = <T>(items: TypedSchema<T>, json: SchemaObject = {}) =>
  typed<readonly T[]>({ type: 'array', ...json, items: items.json });

/** An object whose every property's value `values` accepts (`json` may bound its keys). */
export const record = <T>(values: TypedSchema<T>, json: SchemaObject = {}) =>
  typed<Readonly<Record<string, T>>>({ type: 'object', ...json, additionalProperties: values.json });

/** A value any of `schemas` accepts. */
export const anyOf = <const S extends readonly TypedSchema<unknown>[]>(...schemas: S) =>
  typed<Accepted<S[number]>>({ anyOf: schemas.map((schema) => schema.json) });

/** An object with the `required` properties and any of the `optional` ones; other properties are
 * let through, as a reader of an older or newer writer's values expects. */
export const object = <R extends Shape, O extends Shape = Record<never, never>>(
  required: R,
  optional: O = {} as O,
) =>
  typed<Flat<{ readonly [K in keyof R]: Accepted<R[K]> } & { readonly [K in keyof O]?: Accepted<O[K]> }>>({
    type: 'object',
    required: Object.keys(required),
    properties: Object.fromEntries(
      Object.entries({ ...required, ...optional }).map(([key, schema]) => [key, schema.json]),
    ),
  });
