import type { Hono } from 'hono';
import type { Context } from '../../context.ts';
import type { Views } from '../../render/views.ts';
import { adminPage, fmtDate } from './render.ts';

const SHOWN = 100;
const STATUSES = ['pending', 'delivering', 'delivered', 'dead'];

/**
 * GET /notify/admin/webhooks: outgoing webhook deliveries by status, the newest (dead ones by
 * default) with their last error. Opens and clicks a tracking batch row still stands for count as
 * pending deliveries (which they become when the worker expands the batch), never as a status of
 * their own.
 */
export function registerWebhookPages(app: Hono, { ctx, views }: { ctx: Context; views: Views }): void {
  app.get('/notify/admin/webhooks', async (c) => {
    const asked = c.req.query('status');
    const status = asked && STATUSES.includes(asked) ? asked : 'dead';
    const counts = await ctx.store.outbound.counts();
    const waiting = await ctx.store.outbound.waitingTracking(SHOWN);
    const waitingEvents = waiting.reduce((n, b) => n + b.events, 0);
    const rows = await ctx.store.outbound.recent({ status }, SHOWN);
    return adminPage(c, views, 'webhooks', {
      title: 'Outgoing webhooks',
      endpoints: ctx.config.webhooksOut.map((h) => ({ url: h.url, events: h.events?.join(', ') ?? 'every event' })),
      statuses: STATUSES.map((s) => ({ name: s, count: (counts[s] ?? 0) + (s === 'pending' ? waitingEvents : 0), current: s === status })),
      status,
      // the batches first: they are older than any delivery shown below them
      waiting: status === 'pending' ? waiting.map((b) => ({ ...b, types: b.types.join(', '), created: fmtDate(b.created_at), due: fmtDate(b.due) })) : [],
      rows: rows.map((r) => ({ ...r, created: fmtDate(r.created_at), next: fmtDate(r.next_attempt_at), delivered: fmtDate(r.delivered_at) })),
    });
  });
}
