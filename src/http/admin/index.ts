import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bodyLimit } from 'hono/body-limit';
import type { RouteModule } from '../app.ts';
import { MAX_CSV_BYTES } from '../api/imports.ts';
import { SHIPPED_VIEWS } from '../../render/views.ts';
import { AUTH_FAILURE_RULE, createTokenGate } from '../api/auth.ts';
import { registerAudiencePages } from './audience.ts';
import { requireAdmin, SCRIPT_PATH, SIGN_IN_PATH } from './auth.ts';
import { registerCampaignPages } from './campaigns.ts';
import { registerCompose } from './compose.ts';
import { csrfToken } from './csrf.ts';
import { createImportJobs } from '../api/import-jobs.ts';
import { registerImportPages } from './imports.ts';
import { registerOutboxPages } from './outbox.ts';
import { registerSequencePages } from './sequences.ts';
import { hasSession } from './session.ts';
import { registerSignIn } from './sign-in.ts';
import { registerWebhookPages } from './webhooks.ts';

const SCRIPT = readFileSync(join(SHIPPED_VIEWS, 'notify/admin/console.js'));

/**
 * The /notify/admin pages, mounted only when `adminToken` is set: sign-in to a session cookie,
 * campaigns with their stats, a chart and their lifecycle actions, composing a campaign with a live
 * preview and audience count, drip sequences, the outbox, contacts and lists, outgoing webhooks
 * (dead ones first). Every request passes
 * the token or session check first; every form carries the session's form token (csrf.ts).
 */
export const adminRoutes: RouteModule = (app, parts) => {
  const { ctx, views, services } = parts;
  const token = ctx.config.adminToken;
  if (!token) return;
  if (token.length < 16) ctx.log.warn('adminToken is shorter than 16 characters; use a long random value');
  const keys = { secret: ctx.secret, token };
  const signedIn = (c: Parameters<typeof hasSession>[0]) => hasSession(c, keys, ctx.clock.now());
  // bodies are capped before anything reads them: the sign-in form is open to anyone, so it gets little
  const tooLarge = (c: Parameters<typeof hasSession>[0]) => c.text('Request body too large', 413);
  const caps = new Map([
    [SIGN_IN_PATH, bodyLimit({ maxSize: 16 * 1024, onError: tooLarge })],
    ['/notify/admin/import', bodyLimit({ maxSize: MAX_CSV_BYTES + 1024 * 1024, onError: tooLarge })],
  ]);
  const formCap = bodyLimit({ maxSize: 8 * 1024 * 1024, onError: tooLarge });
  app.use('/notify/admin/*', (c, next) => (caps.get(c.req.path) ?? formCap)(c, next));
  const guard = requireAdmin(token, signedIn);
  app.use('/notify/admin', guard);
  app.use('/notify/admin/*', guard);
  // every page's layout carries a form token (its sign-out form)
  const formToken: Parameters<typeof app.use>[1] = async (c, next) => {
    csrfToken(c, ctx.secret);
    await next();
  };
  app.use('/notify/admin', formToken);
  app.use('/notify/admin/*', formToken);
  // sign-in failures count against the same per-network budget as the API's (same rule, same store)
  const gate = createTokenGate({ token, limiter: parts.limits.limiter(AUTH_FAILURE_RULE), clock: ctx.clock, trustProxy: ctx.config.trustProxy });
  registerSignIn(app, { ctx, views, keys, gate });
  app.get(SCRIPT_PATH, (c) =>
    c.body(new Uint8Array(SCRIPT), 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' }),
  );
  const { stats, campaigns, lists, contacts, drips } = services;
  registerCompose(app, { ctx, views, campaigns, lists });
  registerCampaignPages(app, { ctx, views, stats, campaigns });
  registerSequencePages(app, { views, stats, drips });
  const imports = createImportJobs(ctx, contacts);
  parts.onClose?.(() => imports.close());
  registerImportPages(app, { ctx, views, imports, lists });
  registerOutboxPages(app, { ctx, views });
  registerAudiencePages(app, { ctx, views, contacts, lists });
  registerWebhookPages(app, { ctx, views });
};
