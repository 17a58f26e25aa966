import { NotifyError } from '../errors.ts';
import { isValidEmail } from './email.ts';

/**
 * Limits of one capture post: anything beyond the known fields goes to attributes, so these bound
 * what an anonymous post can store.
 */
export const CAPTURE_LIMITS = {
  /** distinct field names, known ones included */
  fields: 40,
  /** values of one repeated field (`interests[]=a&interests[]=b`) */
  valuesPerField: 20,
  lists: 10,
  /** characters of one attribute value */
  value: 1000,
  name: 200,
} as const;

/** The fields the form helpers write and the capture endpoint reads. */
export const KNOWN_FIELDS = ['email', 'name', 'list', 'redirect', 'notify_hp'] as const;

export interface CaptureInput {
  email: string;
  name?: string;
  lists: string[];
  attributes: Record<string, string | string[]>;
}

/** Field names a host framework's CSRF middleware adds: never kept as attributes. */
const FRAMEWORK_FIELDS = new Set(['_csrf', '_token', 'csrf_token', 'csrfmiddlewaretoken', 'authenticity_token', '__requestverificationtoken']);
const FIELD_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
const LIST_NAME = /^[\p{L}\p{N}][\p{L}\p{N} _.:-]{0,99}$/u;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const invalid = (field: string, message: string, code: 'INVALID_INPUT' | 'INVALID_EMAIL' = 'INVALID_INPUT') => new NotifyError(code, message, { field });

/** The single value of a field that must not repeat. */
function single(fields: Map<string, string[]>, name: string): string | undefined {
  const values = fields.get(name);
  if (!values || values.length === 0) return undefined;
  if (values.length > 1) throw invalid(name, `The ${name} field must be sent once`);
  return values[0];
}

/**
 * Turns the posted fields (name -> values, in order) into contact input, or throws a NotifyError
 * (INVALID_EMAIL / INVALID_INPUT with details.field) naming the first problem. Values are checked,
 * never trimmed into something else: a name with CR or LF is refused, not cleaned.
 */
export function parseCaptureFields(fields: Map<string, string[]>): CaptureInput {
  if (fields.size > CAPTURE_LIMITS.fields) throw invalid('*', `A capture post may have at most ${CAPTURE_LIMITS.fields} fields`);
  const email = single(fields, 'email')?.trim();
  if (!email) throw invalid('email', 'Please enter your email address.', 'INVALID_EMAIL');
  if (!isValidEmail(email)) throw invalid('email', 'Please enter a valid email address.', 'INVALID_EMAIL');
  const name = single(fields, 'name')?.trim();
  if (name !== undefined && (name.length > CAPTURE_LIMITS.name || /[\r\n\u0000-\u001f\u007f]/.test(name))) {
    throw invalid('name', `Your name must be a single line of at most ${CAPTURE_LIMITS.name} characters.`);
  }
  return { email, name: name || undefined, lists: parseLists(fields.get('list') ?? []), attributes: parseAttributes(fields) };
}

function parseLists(values: string[]): string[] {
  const lists = [...new Set(values.map((v) => v.trim()).filter(Boolean))];
  if (lists.length > CAPTURE_LIMITS.lists) throw invalid('list', `At most ${CAPTURE_LIMITS.lists} lists per sign-up`);
  for (const list of lists) if (!LIST_NAME.test(list)) throw invalid('list', 'A list name must be 1 to 100 letters, digits, spaces or _ . : -');
  return lists;
}

function parseAttributes(fields: Map<string, string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [raw, values] of fields) {
    const key = raw.endsWith('[]') ? raw.slice(0, -2) : raw;
    if ((KNOWN_FIELDS as readonly string[]).includes(key) || key.startsWith('notify_') || FRAMEWORK_FIELDS.has(key.toLowerCase())) continue;
    if (!FIELD_NAME.test(key) || FORBIDDEN_KEYS.has(key)) throw invalid(raw.slice(0, 64), 'Field names must be 1 to 64 letters, digits or _ . -');
    if (values.length > CAPTURE_LIMITS.valuesPerField) throw invalid(key, `A field may repeat at most ${CAPTURE_LIMITS.valuesPerField} times`);
    const kept = values.filter((v) => v !== '');
    for (const v of kept) if (v.length > CAPTURE_LIMITS.value) throw invalid(key, `The ${key} field must be at most ${CAPTURE_LIMITS.value} characters`);
    if (kept.length === 0) continue;
    out[key] = raw.endsWith('[]') || kept.length > 1 ? kept : kept[0];
  }
  return out;
}
