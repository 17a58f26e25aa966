import type { RouteModule } from '../app.ts';
import { doConfirm, showConfirm } from './confirm.ts';
import { handleCapture } from './route.ts';

/** One sign-up address may be posted this often (per hour), whoever posts it: stops subscription bombing. */
export const ADDRESS_RULE = { name: 'capture:address', points: 3, windowSec: 3600 } as const;

/** POST /notify/capture, GET and POST /notify/confirm/<token>. */
export const captureRoutes: RouteModule = (app, parts) => {
  const { ctx } = parts;
  const { limits } = parts;
  const { contacts, optin } = parts.services;
  const deps = {
    ctx,
    contacts,
    mailConfirmation: optin.mailConfirmation,
    ipLimiter: ctx.config.captureRateLimit > 0 ? limits.limiter({ name: 'capture:ip', points: ctx.config.captureRateLimit, windowSec: 60 }) : undefined,
    addressLimiter: limits.limiter(ADDRESS_RULE),
  };
  app.post('/notify/capture', (c) => handleCapture(c, deps));
  app.get('/notify/confirm/:token', (c) => showConfirm(c, parts, optin));
  app.post('/notify/confirm/:token', (c) => doConfirm(c, parts, optin));
};

