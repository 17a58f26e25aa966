import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Hono } from 'hono';
import { apiRoutes } from '../../src/http/api/index.ts';
import { API_PREFIX } from '../../src/http/api/route.ts';
import { createMemoryStore } from '../../src/http/rate-limit/memory.ts';
import type { Notify } from '../../src/notify.ts';

export const TOKEN = 'api-token-0123456789abcdef';
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> };

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/**
 * Checks HTTP answers against the OpenAPI document the way a client generated from it would read
 * them: the operation must be in the document, the status among its responses, the media type the
 * one described, and the body valid against that response's schema (ajv, JSON Schema 2020-12).
 */
export class DocumentChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  /** `METHOD /path/{template} status` of every answer checked */
  readonly seen = new Set<string>();

  constructor(readonly doc: Doc) {
    this.ajv.addFormat('date-time', (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s) && !Number.isNaN(Date.parse(s)));
    this.ajv.addSchema({ ...doc, $id: 'openapi' });
  }

  /** the document's path template for a request path under /notify/api/v1 */
  template(path: string): string | undefined {
    const rel = path.slice(API_PREFIX.length);
    return Object.keys(this.doc.paths).find((t) => new RegExp(`^${t.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(rel));
  }

  /** the problem of an answer the document does not describe, or undefined when it does */
  explain(method: string, path: string, status: number, contentType: string | null, body: string): string | undefined {
    const template = this.template(path);
    const op = template ? this.doc.paths[template][method.toLowerCase()] : undefined;
    if (!template || !op) return `${method} ${path} is not in the document`;
    const response = op.responses[String(status)];
    if (!response) return `${method} ${template} answered ${status}, which the document does not list`;
    this.seen.add(`${method.toUpperCase()} ${template} ${status}`);
    const media = (contentType ?? '').split(';')[0].trim();
    if (!response.content) return body === '' ? undefined : `${method} ${template} ${status} has a body the document says it has not`;
    if (!response.content[media]) return `${method} ${template} ${status} is ${media || 'without a type'}, the document says ${Object.keys(response.content).join(', ')}`;
    const key = pointer('paths', template, method.toLowerCase(), 'responses', String(status), 'content', media, 'schema');
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi#/${key}` });
      this.compiled.set(key, validate);
    }
    const value = media.endsWith('json') ? JSON.parse(body) : body;
    if (!validate(value)) return `${method} ${template} ${status}: ${this.ajv.errorsText(validate.errors)}\n${body.slice(0, 500)}`;
    return undefined;
  }
}

export interface ApiAnswer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Calls the API in-process; every answer is checked against the document before the test sees it. */
export function apiClient(notify: () => Notify, checker: DocumentChecker, base = { token: TOKEN as string | null, ip: '' }) {
  return async function api<T = any>(method: string, path: string, opts: { body?: unknown; token?: string | null; headers?: Record<string, string>; ip?: string } = {}): Promise<ApiAnswer<T>> {
    const token = opts.token === undefined ? base.token : opts.token;
    const headers: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const ip = opts.ip ?? base.ip;
    if (ip) headers['x-forwarded-for'] = ip;
    let body: BodyInit | undefined;
    if (opts.body !== undefined) {
      if (opts.body instanceof FormData) body = opts.body;
      else {
        body = typeof opts.body === 'string' || opts.body instanceof Uint8Array ? (opts.body as BodyInit) : JSON.stringify(opts.body);
        headers['content-type'] = 'application/json';
      }
    }
    const res = await notify().fetch(new Request(`http://localhost:3000${API_PREFIX}${path}`, { method, headers: { ...headers, ...opts.headers }, body }));
    const text = await res.text();
    const wrong = checker.explain(method, new URL(`http://x${API_PREFIX}${path}`).pathname, res.status, res.headers.get('content-type'), text);
    assert.equal(wrong, undefined, wrong);
    const json = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
    return { status: res.status, headers: res.headers, body: json as T, text };
  };
}

/** Every route the API mounts on a Hono app (method and path), as the router registered them. */
export function mountedRoutes(notify: Notify): { method: string; path: string }[] {
  const app = new Hono();
  apiRoutes(app, { ctx: notify.context, services: notify.services, limits: createMemoryStore(), recorder: { flush: async () => {} } as never, views: undefined as never, notify: () => notify });
  return app.routes.filter((r) => r.path.startsWith(API_PREFIX) && r.method !== 'ALL').map((r) => ({ method: r.method, path: r.path }));
}

/** The mounted routes the document has no operation for. */
export function missingFromDocument(routes: { method: string; path: string }[], doc: Doc): string[] {
  return routes.filter((r) => !doc.paths[r.path.slice(API_PREFIX.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.path}`);
}
