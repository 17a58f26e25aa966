import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { NotifyError } from '../../errors.ts';
import type { JsonSchema } from './route.ts';

/**
 * Request bodies and query strings are checked against the schemas the OpenAPI document
 * publishes, so what the document says and what the server accepts cannot drift apart. Each
 * schema is compiled on its first use: an instance that never serves the API never pays for it.
 */
export function createValidator(components: Record<string, JsonSchema>) {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  ajv.addSchema({ $id: 'notify-api', components: { schemas: components } });
  const cache = new WeakMap<JsonSchema, ValidateFunction>();
  return (schema: JsonSchema, value: unknown, where: 'body' | 'query' | 'path'): void => {
    let fn = cache.get(schema);
    if (!fn) {
      fn = ajv.compile(rebase(schema));
      cache.set(schema, fn);
    }
    if (!fn(value)) throw invalid(fn.errors?.[0], where);
  };
}

/** Component references point into the registered `notify-api` schema. */
function rebase(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"notify-api#/components/'));
}

function invalid(e: ErrorObject | undefined, where: 'body' | 'query' | 'path'): NotifyError {
  if (!e) return new NotifyError('INVALID_INPUT', `The request ${where} is invalid`);
  const path = e.instancePath.split('/').filter(Boolean);
  if (e.keyword === 'required') path.push(String(e.params.missingProperty));
  if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty));
  const field = path.map((p, i) => (/^[0-9]+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
  const what = e.keyword === 'additionalProperties' ? 'is not a known field' : e.keyword === 'required' ? 'is required' : (e.message ?? 'is invalid');
  return new NotifyError('INVALID_INPUT', field ? `${field} ${what}` : `The request ${where} ${what}`, field ? { field } : {});
}
