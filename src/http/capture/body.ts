import { readCapped } from '../read-body.ts';

/** Hard limits of a capture request body, checked before anything is parsed or stored. */
export const MAX_BODY_BYTES = 64 * 1024;
/** entries counted with repeats; the domain has its own, smaller limit on distinct fields */
export const MAX_ENTRIES = 100;

/** A request that cannot be a capture post. `status` is the HTTP answer. */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Fields = Map<string, string[]>;

/**
 * Reads a capture body: `application/x-www-form-urlencoded` and `multipart/form-data` (standard form
 * posts) or `application/json` (AJAX). Malformed encodings, files, nested JSON and unknown types are
 * refused rather than guessed at.
 */
export async function readFields(req: Request): Promise<Fields> {
  const type = (req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'].includes(type)) {
    throw new BodyError(415, 'unsupported_type', 'Send the form as application/x-www-form-urlencoded, multipart/form-data or application/json.');
  }
  const bytes = await readCapped(req, MAX_BODY_BYTES);
  if (!bytes) throw tooLarge();
  const fields =
    type === 'application/json' ? parseJsonBody(bytes) : type === 'multipart/form-data' ? await parseMultipart(bytes, req.headers.get('content-type')!) : parseUrlencoded(bytes);
  return fields;
}

const tooLarge = () => new BodyError(413, 'too_large', `The form is too large (at most ${MAX_BODY_BYTES / 1024} KiB).`);
const malformed = (what: string) => new BodyError(400, 'malformed', `The form data is malformed (${what}).`);

function add(fields: Fields, name: string, value: string): void {
  if (countEntries(fields) >= MAX_ENTRIES) throw new BodyError(413, 'too_many_fields', `The form has too many fields (at most ${MAX_ENTRIES}).`);
  const values = fields.get(name);
  if (values) values.push(value);
  else fields.set(name, [value]);
}

const countEntries = (fields: Fields) => {
  let n = 0;
  for (const v of fields.values()) n += v.length;
  return n;
};

/** Strict: bytes must be UTF-8 and every %-escape must decode, unlike URLSearchParams which guesses. */
function parseUrlencoded(bytes: Buffer): Fields {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw malformed('not UTF-8');
  }
  const fields: Fields = new Map();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const [rawName, rawValue] = eq === -1 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    try {
      add(fields, decodeURIComponent(rawName.replace(/\+/g, ' ')), decodeURIComponent(rawValue.replace(/\+/g, ' ')));
    } catch (err) {
      if (err instanceof BodyError) throw err;
      throw malformed('bad percent-encoding');
    }
  }
  return fields;
}

async function parseMultipart(bytes: Buffer, contentType: string): Promise<Fields> {
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(bytes), { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw malformed('bad multipart body');
  }
  const fields: Fields = new Map();
  for (const [name, value] of form) {
    if (typeof value !== 'string') throw new BodyError(400, 'file_upload', 'File uploads are not accepted here.');
    add(fields, name, value);
  }
  return fields;
}

function parseJsonBody(bytes: Buffer): Fields {
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw malformed('bad JSON');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw malformed('JSON body must be an object');
  const fields: Fields = new Map();
  const scalar = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);
  for (const [name, value] of Object.entries(data)) {
    const values = Array.isArray(value) ? value : [value];
    if (value === null) continue;
    for (const v of values) {
      const s = scalar(v);
      if (s === undefined) throw malformed(`field ${JSON.stringify(name.slice(0, 64))} must be text or a list of text`);
      add(fields, name, s);
    }
  }
  return fields;
}
