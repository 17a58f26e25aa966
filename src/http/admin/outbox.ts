import type { Hono } from 'hono';
import type { Context } from '../../context.ts';
import type { Views } from '../../render/views.ts';
import { listOutbox, outboxDir, readMessage, readRaw } from './outbox-files.ts';
import { adminPage, fmtDate, MAIL_HEADERS, notFound, pageParam } from './render.ts';

const PER_PAGE = 50;

interface Parts {
  ctx: Context;
  views: Views;
}

/** GET /notify/admin/outbox, /outbox/:name, /outbox/:name/html, /outbox/:name/raw */
export function registerOutboxPages(app: Hono, { ctx, views }: Parts): void {
  const dir = outboxDir(ctx.config);

  app.get('/notify/admin/outbox', async (c) => {
    if (!dir) return adminPage(c, views, 'outbox', { title: 'Outbox', dir: null, mailer: typeof ctx.config.mailer === 'string' ? ctx.config.mailer.replace(/\/\/[^@/]*@/, '//***@') : 'a Mailer object' });
    const page = pageParam(c.req.query('page'));
    const all = await listOutbox(dir);
    const slice = all.slice((page - 1) * PER_PAGE, page * PER_PAGE);
    const messages = [];
    for (const entry of slice) {
      const m = await readMessage(dir, entry.name).catch(() => undefined);
      messages.push({ name: entry.name, size: entry.size, written: fmtDate(entry.mtime), to: m?.to ?? '', subject: m?.subject ?? '(unreadable)' });
    }
    return adminPage(c, views, 'outbox', {
      title: 'Outbox',
      dir,
      total: all.length,
      messages,
      prevPage: page > 1 ? page - 1 : null,
      nextPage: all.length > page * PER_PAGE ? page + 1 : null,
    });
  });

  app.get('/notify/admin/outbox/:name', async (c) => {
    const m = dir ? await readMessage(dir, c.req.param('name')) : undefined;
    if (!m) return notFound(c, views, 'There is no such message in the outbox.');
    return adminPage(c, views, 'message', { title: m.subject || m.name, m, date: fmtDate(m.date) });
  });

  app.get('/notify/admin/outbox/:name/html', async (c) => {
    const m = dir ? await readMessage(dir, c.req.param('name')) : undefined;
    if (!m?.html) return notFound(c, views, 'There is no HTML part to show.');
    return c.body(withTopTarget(m.html), 200, MAIL_HEADERS);
  });

  app.get('/notify/admin/outbox/:name/raw', async (c) => {
    const raw = dir ? await readRaw(dir, c.req.param('name')) : undefined;
    if (!raw) return notFound(c, views, 'There is no such message in the outbox.');
    return c.body(new Uint8Array(raw), 200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store', 'Content-Security-Policy': "default-src 'none'; sandbox" });
  });
}

/** Links in the message open in the whole tab (the frame is only a preview). */
function withTopTarget(html: string): string {
  const base = '<base target="_top">';
  const head = /<head(\s[^>]*)?>/i.exec(html);
  return head ? html.slice(0, head.index + head[0].length) + base + html.slice(head.index + head[0].length) : base + html;
}
