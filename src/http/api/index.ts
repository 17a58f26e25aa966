import type { RouteModule } from '../app.ts';
import { AUTH_FAILURE_RULE, createApiAuth } from './auth.ts';
import { campaignRoutes, campaignSchemas } from './campaigns.ts';
import { contactRoutes, contactSchemas } from './contacts.ts';
import { createImportJobs } from './import-jobs.ts';
import { importRoutes, importSchemas } from './imports.ts';
import { listRoutes, listSchemas } from './lists.ts';
import { openApiDocument } from './openapi.ts';
import type { ApiDeps, ApiRoute, JsonSchema } from './route.ts';
import { API_HEADERS, mountRoutes } from './router.ts';
import { sequenceRoutes, sequenceSchemas } from './sequences.ts';
import { createValidator } from './validate.ts';

/** The schemas the routes refer to as #/components/schemas/<name>. */
export const API_SCHEMAS: Record<string, JsonSchema> = { ...contactSchemas, ...listSchemas, ...campaignSchemas, ...sequenceSchemas, ...importSchemas };

const openApiRoute: ApiRoute = {
  method: 'get',
  path: '/openapi.json',
  operationId: 'getOpenApiDocument',
  tag: 'meta',
  summary: 'This document (no token needed)',
  auth: false,
  responses: { 200: { description: 'the OpenAPI 3.1 document', schema: { type: 'object' } } },
  handle: async () => ({ body: API_DOCUMENT }),
};

/**
 * Every operation of the API, in the order the router tries them (a fixed path such as
 * /contacts/count before /contacts/{contact}). Adding an operation is one entry here or in its
 * resource's list; the document and the router both follow.
 */
export const API_ROUTES: ApiRoute[] = [openApiRoute, ...contactRoutes, ...listRoutes, ...campaignRoutes, ...sequenceRoutes, ...importRoutes];

export const API_DOCUMENT = openApiDocument(API_ROUTES, API_SCHEMAS);

/**
 * The JSON API under /notify/api/v1/, mounted only when `adminToken` is set (like the admin pages).
 * Handlers call the public notify.* operations, so the API does exactly what a script calling the
 * library would, under the same guard (a closed instance, a lost database).
 */
export const apiRoutes: RouteModule = (app, parts) => {
  const { ctx, services } = parts;
  const token = ctx.config.adminToken;
  if (!token || !parts.notify) return;
  const imports = createImportJobs(ctx, services.contacts);
  parts.onClose?.(() => imports.close());
  const notify = parts.notify;
  let deps: ApiDeps | undefined;
  mountRoutes(app, API_ROUTES, {
    deps: () => (deps ??= { notify: notify(), ctx, stats: services.stats, imports }),
    authenticate: createApiAuth({ token, limiter: parts.limits.limiter(AUTH_FAILURE_RULE), clock: ctx.clock, trustProxy: ctx.config.trustProxy }),
    validate: createValidator(API_SCHEMAS),
    log: ctx.log,
  });
};

export { API_HEADERS };
