import type { JsonSchema } from './route.ts';

/** Small builders for the JSON Schemas of the document; every record schema is closed (additionalProperties: false). */
export const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
export const int: JsonSchema = { type: 'integer' };
export const str: JsonSchema = { type: 'string' };
export const bool: JsonSchema = { type: 'boolean' };
export const freeObject: JsonSchema = { type: 'object' };

/** Plain whole-number properties, one a name (counts such as sent and failed). */
export const counts = (...names: string[]): Record<string, JsonSchema> => Object.fromEntries(names.map((n) => [n, int]));

export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
export const arrayOf = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra });

/** An object with exactly these properties; all required unless listed in `optional`. */
export function record(properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties).filter((k) => !optional.includes(k)), additionalProperties: false };
}

/** A request body: only these fields, none required unless listed. */
export function input(properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false, ...extra };
}

export const text = (maxLength: number, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', maxLength, ...extra });

/** Query strings are text: a whole number is checked by its digits, its range by the operation. */
export const digits: JsonSchema = { type: 'string', pattern: '^[0-9]{1,15}$' };

export const PROBLEM: JsonSchema = record(
  {
    type: str,
    title: str,
    status: int,
    detail: str,
    code: { ...str, description: "notify's error code (NOT_FOUND, INVALID_INPUT, DUPLICATE, ...) or UNAUTHORIZED, RATE_LIMITED, BODY_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, METHOD_NOT_ALLOWED, INTERNAL" },
    field: { ...str, description: 'the input field at fault' },
  },
  ['field'],
);
