import type { RouteModule } from '../app.ts';
import { createStatsService } from '../../core/stats.ts';
import { statsAfterFlush } from '../../core/tracking-stats.ts';
import { registerAudiencePages } from './audience.ts';
import { requireAdminToken } from './auth.ts';
import { registerCampaignPages } from './campaigns.ts';
import { registerOutboxPages } from './outbox.ts';
import { registerWebhookPages } from './webhooks.ts';

/**
 * The /notify/admin pages, mounted only when `adminToken` is set: campaigns with their stats and a
 * chart and its lifecycle actions (schedule, pause, resume, cancel, test copies: POST forms with a
 * per-session token, see csrf.ts), drip sequences with enrollments by status, the outbox, contacts and lists, outgoing webhooks (dead ones first). Every
 * request passes the token check first.
 */
export const adminRoutes: RouteModule = (app, { ctx, views, recorder }) => {
  const token = ctx.config.adminToken;
  if (!token) return;
  if (token.length < 16) ctx.log.warn('adminToken is shorter than 16 characters; use a long random value');
  const auth = requireAdminToken(token);
  app.use('/notify/admin', auth);
  app.use('/notify/admin/*', auth);
  // figures include the opens and clicks this server has buffered but not yet written
  registerCampaignPages(app, { ctx, views, stats: statsAfterFlush(createStatsService(ctx), recorder) });
  registerOutboxPages(app, { ctx, views });
  registerAudiencePages(app, { ctx, views });
  registerWebhookPages(app, { ctx, views });
};
