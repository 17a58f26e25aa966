import type { Context } from '../../context.ts';
import { NotifyError } from '../../errors.ts';
import type { StatsService } from '../../core/stats.ts';
import type { Notify } from '../../notify.ts';
import type { ImportJobs } from './import-jobs.ts';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1). */
export type JsonSchema = Record<string, unknown>;

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** What every handler can reach: the public operations first, internals only where no public one exists. */
export interface ApiDeps {
  notify: Notify;
  ctx: Context;
  /** campaign and sequence summaries, with this process's buffered opens and clicks counted */
  stats: StatsService;
  imports: ImportJobs;
}

export interface ApiRequest {
  deps: ApiDeps;
  /** path parameters, decoded */
  params: Record<string, string>;
  /** the declared query parameters that were given (arrays for array-typed ones) */
  query: Record<string, string | string[]>;
  /** the JSON body, validated against the route's schema; the raw bytes for other media types */
  body: unknown;
  raw: Request;
}

export type ApiReply = { status?: number; body?: unknown; headers?: Record<string, string> } | Response;

export interface ApiResponse {
  description: string;
  /** the body's schema (application/json unless contentType says otherwise); none = no body */
  schema?: JsonSchema;
  contentType?: string;
}

/**
 * One operation of the API: its OpenAPI description and its handler, in one place, so the
 * document at /openapi.json is built from the very list the router serves.
 */
export interface ApiRoute {
  method: Method;
  /** OpenAPI form, relative to /notify/api/v1: `/contacts/{contact}` */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  description?: string;
  params?: Record<string, { description: string; schema?: JsonSchema }>;
  query?: Record<string, { description: string; schema: JsonSchema }>;
  body?: {
    schema: JsonSchema;
    contentType?: 'application/json' | 'text/csv';
    description?: string;
    maxBytes?: number;
    /** no body at all reads as {} */
    optional?: boolean;
    /** also accepted as multipart/form-data (a browser's file upload): the bytes of this file field */
    formField?: string;
  };
  responses: Record<number, ApiResponse>;
  /** problem statuses this operation answers besides those every operation can (401, 413, 415, 429, 500, 503) */
  problems?: number[];
  /** false: answered without the admin token (only the document itself) */
  auth?: boolean;
  handle(req: ApiRequest): Promise<ApiReply>;
}

export const API_PREFIX = '/notify/api/v1';

/** `/contacts/{contact}` -> `/contacts/:contact` */
export function honoPath(path: string): string {
  return API_PREFIX + path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** the value a handler looked up, or a 404 problem that names the parameter which found nothing */
export function found<T>(value: T | null | undefined, message: string, field: string): T {
  if (value === undefined || value === null) throw new NotifyError('NOT_FOUND', message, { field });
  return value;
}

/** The path parameter that names the resource, as the document describes it. */
export interface KeyParam {
  name: string;
  description: string;
  schema?: JsonSchema;
}

/**
 * The GET of one resource named by a path parameter: 200 with what `find` returns, 404 (NOT_FOUND,
 * the parameter as the field at fault) with `missing`'s message when it returns nothing.
 */
export function getOne(
  route: Pick<ApiRoute, 'path' | 'operationId' | 'tag' | 'summary'>,
  key: KeyParam,
  reply: ApiResponse,
  find: (deps: ApiDeps, key: string) => unknown,
  missing: (key: string) => string,
): ApiRoute {
  return {
    ...route,
    method: 'get',
    params: { [key.name]: { description: key.description, ...(key.schema ? { schema: key.schema } : {}) } },
    responses: { 200: reply },
    problems: [404],
    handle: async ({ deps, params }) => ({ body: found(await find(deps, params[key.name]), missing(params[key.name]), key.name) }),
  };
}
