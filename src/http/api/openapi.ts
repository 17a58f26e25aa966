import { MAX_JSON_BYTES } from './router.ts';
import type { ApiRoute, JsonSchema } from './route.ts';
import { PROBLEM } from './schemas.ts';

/** Problems any operation can answer, besides its own. */
const COMMON_PROBLEMS: Record<number, string> = {
  401: 'the admin token is missing or wrong',
  413: 'the body is too large',
  415: 'the body is not of the media type the operation reads',
  429: 'too many failed authentication attempts from this network (Retry-After says when to try again)',
  500: 'an unexpected error (logged by the server)',
  503: 'the database is unavailable or the instance is closing',
};
const PROBLEM_REASONS: Record<number, string> = { 404: 'no such record', 405: 'method not allowed', 409: 'conflicts with the current state', 422: 'the input is invalid (the problem names the field)' };

/** The OpenAPI 3.1 document, built from the same route list the router serves. */
export function openApiDocument(routes: ApiRoute[], components: Record<string, JsonSchema>): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path][route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'notify console API',
      version: '1',
      description: 'Contacts, lists, campaigns, sequences and imports of a notify instance. Authenticate with `Authorization: Bearer <adminToken>`. Errors are RFC 9457 problem documents carrying notify\'s error code.',
    },
    servers: [{ url: '/notify/api/v1' }],
    security: [{ adminToken: [] }],
    tags: ['contacts', 'lists', 'campaigns', 'sequences', 'imports', 'meta'].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: 'the adminToken option' } },
      schemas: { Problem: PROBLEM, ...components },
    },
  };
}

function operation(route: ApiRoute): Record<string, unknown> {
  const parameters = [
    ...Object.entries(route.params ?? {}).map(([name, p]) => ({ name, in: 'path', required: true, description: p.description, schema: p.schema ?? { type: 'string' } })),
    ...Object.entries(route.query ?? {}).map(([name, p]) => ({ name, in: 'query', required: false, description: p.description, schema: p.schema })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(route.responses)) {
    responses[status] = { description: r.description, ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: r.schema } } } : {}) };
  }
  // whatever reads input checked against a schema can refuse it
  const checked = route.body || route.query || Object.values(route.params ?? {}).some((p) => p.schema) ? [422] : [];
  const problems = route.auth === false ? [] : [...(route.problems ?? []), ...checked, ...Object.keys(COMMON_PROBLEMS).map(Number)];
  for (const status of [...new Set(problems)].sort()) {
    responses[String(status)] = { description: COMMON_PROBLEMS[status] ?? PROBLEM_REASONS[status] ?? 'a problem', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.auth === false ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            description: route.body.description ?? `at most ${route.body.maxBytes ?? MAX_JSON_BYTES} bytes`,
            content: {
              [route.body.contentType ?? 'application/json']: { schema: route.body.schema },
              ...(route.body.formField
                ? { 'multipart/form-data': { schema: { type: 'object', properties: { [route.body.formField]: { type: 'string', contentMediaType: route.body.contentType } }, required: [route.body.formField] } } }
                : {}),
            },
          },
        }
      : {}),
    responses,
  };
}
