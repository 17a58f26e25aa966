import type { Context as HonoContext, Hono } from 'hono';
import { NotifyError } from '../../errors.ts';
import { readCapped } from '../read-body.ts';
import { HttpProblem, type Problem, problem, problemOf, problemResponse } from './problem.ts';
import { type ApiDeps, type ApiReply, type ApiRoute, API_PREFIX, honoPath, type JsonSchema } from './route.ts';

/** A JSON body over this is refused (413) before it is parsed; a campaign's HTML fits many times over. */
export const MAX_JSON_BYTES = 1024 * 1024;

export const API_HEADERS: Record<string, string> = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

export interface RouterParts {
  deps: () => ApiDeps;
  /** undefined = allowed; else the refusal */
  authenticate: (c: HonoContext) => Promise<{ problem: Problem; headers: Record<string, string> } | undefined>;
  validate: (schema: JsonSchema, value: unknown, where: 'body' | 'query' | 'path') => void;
  log: ApiDeps['ctx']['log'];
}

/** Mounts every route of the registry on the app, each behind the token check and its input checks. */
export function mountRoutes(app: Hono, routes: ApiRoute[], parts: RouterParts): void {
  for (const route of routes) {
    const qs = route.query ? querySchema(route.query) : undefined;
    const ps = route.params ? querySchema(route.params) : undefined;
    app.on(route.method.toUpperCase(), honoPath(route.path), async (c) => {
      try {
        if (route.auth !== false) {
          const refused = await parts.authenticate(c);
          if (refused) return problemResponse(c, refused.problem, refused.headers);
        }
        const params = c.req.param() as Record<string, string>;
        if (ps) parts.validate(ps, params, 'path');
        const query = readQuery(c, route);
        if (qs) parts.validate(qs, query, 'query');
        const body = route.body ? await readBody(c, route, parts) : undefined;
        return send(c, await route.handle({ deps: parts.deps(), params, query, body, raw: c.req.raw }));
      } catch (err) {
        const p = problemOf(err);
        if (p.status >= 500) parts.log.error({ err, path: c.req.path }, 'api request failed');
        return problemResponse(c, p);
      }
    });
  }
  // Anything else under the prefix: 405 with Allow when the path exists, else 404; both as problems.
  app.all(`${API_PREFIX}/*`, async (c) => {
    const refused = await parts.authenticate(c).catch((err) => {
      parts.log.error({ err, path: c.req.path }, 'api request failed');
      return { problem: problemOf(err), headers: {} };
    });
    if (refused) return problemResponse(c, refused.problem, refused.headers);
    const allowed = routes.filter((r) => pathPattern(r.path).test(c.req.path.slice(API_PREFIX.length))).map((r) => r.method.toUpperCase());
    if (allowed.length > 0) return problemResponse(c, problem('METHOD_NOT_ALLOWED', 405, `${c.req.method} is not allowed here`), { Allow: [...new Set(allowed)].join(', ') });
    return problemResponse(c, problem('NOT_FOUND', 404, `No API route ${c.req.method} ${c.req.path}`));
  });
}

function send(c: HonoContext, reply: ApiReply): Response {
  if (reply instanceof Response) return reply;
  const status = (reply.status ?? 200) as 200;
  if (reply.body === undefined) return c.body(null, status, { ...API_HEADERS, ...reply.headers });
  return c.body(JSON.stringify(reply.body), status, { 'Content-Type': 'application/json; charset=utf-8', ...API_HEADERS, ...reply.headers });
}

async function readBody(c: HonoContext, route: ApiRoute, parts: RouterParts): Promise<unknown> {
  const spec = route.body!;
  const type = spec.contentType ?? 'application/json';
  const given = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (spec.optional && given === '' && !c.req.header('transfer-encoding') && Number(c.req.header('content-length') ?? 0) === 0) return {};
  const form = spec.formField && given === 'multipart/form-data';
  if (given !== type && !form) throw new HttpProblem(problem('UNSUPPORTED_MEDIA_TYPE', 415, `Send the body as ${type}${spec.formField ? ' or multipart/form-data' : ''}`));
  const max = spec.maxBytes ?? MAX_JSON_BYTES;
  const bytes = await readCapped(c.req.raw, max);
  if (!bytes) throw new HttpProblem(problem('BODY_TOO_LARGE', 413, `The body is over ${max} bytes`));
  if (form) return formFile(bytes, c.req.header('content-type')!, spec.formField!);
  if (type !== 'application/json') return bytes;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new NotifyError('INVALID_INPUT', 'The body is not valid JSON');
  }
  parts.validate(spec.schema, value, 'body');
  return value;
}

/** The named file of a multipart body (already size-capped), as bytes. */
async function formFile(bytes: Buffer, contentType: string, field: string): Promise<Buffer> {
  let file: FormDataEntryValue | null;
  try {
    file = (await new Response(new Uint8Array(bytes), { headers: { 'content-type': contentType } }).formData()).get(field);
  } catch {
    throw new NotifyError('INVALID_INPUT', 'The multipart body cannot be read');
  }
  if (file === null) throw new NotifyError('INVALID_INPUT', `The form has no ${field} field`, { field });
  return typeof file === 'string' ? Buffer.from(file) : Buffer.from(await file.arrayBuffer());
}

function readQuery(c: HonoContext, route: ApiRoute): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, { schema }] of Object.entries(route.query ?? {})) {
    const values = c.req.queries(name);
    if (!values) continue;
    out[name] = schema.type === 'array' ? values : values[values.length - 1];
  }
  return out;
}

/** path or query parameters as one object schema */
function querySchema(params: Record<string, { schema?: JsonSchema }>): JsonSchema {
  return { type: 'object', properties: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v.schema ?? { type: 'string' }])) };
}

function pathPattern(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[A-Za-z0-9_]+\}/g, '[^/]+')}/?$`);
}
