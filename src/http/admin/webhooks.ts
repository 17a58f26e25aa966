import type { Hono } from 'hono';
import type { Context } from '../../context.ts';
import type { Views } from '../../render/views.ts';
import { adminPage, fmtDate } from './render.ts';

const SHOWN = 100;
const STATUSES = ['pending', 'delivering', 'delivered', 'dead'];

/** GET /notify/admin/webhooks: outgoing webhook deliveries by status, the newest (dead ones by default) with their last error. */
export function registerWebhookPages(app: Hono, { ctx, views }: { ctx: Context; views: Views }): void {
  app.get('/notify/admin/webhooks', async (c) => {
    const asked = c.req.query('status');
    const status = asked && STATUSES.includes(asked) ? asked : 'dead';
    const counts = await ctx.store.outbound.counts();
    const rows = await ctx.store.outbound.recent({ status }, SHOWN);
    return adminPage(c, views, 'webhooks', {
      title: 'Outgoing webhooks',
      endpoints: ctx.config.webhooksOut.map((h) => ({ url: h.url, events: h.events?.join(', ') ?? 'every event' })),
      statuses: STATUSES.map((s) => ({ name: s, count: counts[s] ?? 0, current: s === status })),
      status,
      rows: rows.map((r) => ({ ...r, created: fmtDate(r.created_at), next: fmtDate(r.next_attempt_at), delivered: fmtDate(r.delivered_at) })),
    });
  });
}
