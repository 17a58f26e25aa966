import type { Hono } from 'hono';
import type { Context } from '../../context.ts';
import { createContactsService } from '../../core/contacts.ts';
import { createListsService } from '../../core/lists.ts';
import { CONTACT_STATUSES, type ContactStatus } from '../../core/types.ts';
import { isNotifyError } from '../../errors.ts';
import type { Views } from '../../render/views.ts';
import { adminPage, fmtDate } from './render.ts';

const PER_PAGE = 50;

/**
 * GET /notify/admin/lists (name, description, public, subscribers) and GET /notify/admin/contacts
 * (search, filter by list and status, cursor pages). Read-only, like the other admin pages.
 */
export function registerAudiencePages(app: Hono, { ctx, views }: { ctx: Context; views: Views }): void {
  const contacts = createContactsService(ctx);
  const lists = createListsService(ctx);

  app.get('/notify/admin/lists', async (c) => {
    const all = await lists.list();
    return adminPage(c, views, 'lists', {
      title: 'Lists',
      lists: all.map((l) => ({ name: l.name, description: l.description ?? '', public: l.public, subscribers: l.subscribers, created: fmtDate(l.created_at) })),
    });
  });

  app.get('/notify/admin/contacts', async (c) => {
    const q = { search: c.req.query('search') ?? '', list: c.req.query('list') ?? '', status: c.req.query('status') ?? '', after: c.req.query('after') ?? '' };
    const data = { title: 'Contacts', q, statuses: CONTACT_STATUSES, lists: (await lists.list()).map((l) => l.name), contacts: [] as unknown[], next: null as string | null, error: '' };
    try {
      const page = await contacts.list({
        search: q.search || undefined,
        list: q.list || undefined,
        status: (q.status || undefined) as ContactStatus | undefined,
        after: q.after || undefined,
        limit: PER_PAGE,
      });
      data.contacts = page.contacts.map((p) => ({ id: p.id, email: p.email, name: p.name ?? '', status: p.status, lists: p.lists.join(', '), created: fmtDate(p.created_at) }));
      data.next = page.next && new URLSearchParams({ ...q, after: page.next }).toString();
    } catch (err) {
      // a bad filter (unknown list, malformed cursor) is shown on the page, never a 500
      if (!isNotifyError(err)) throw err;
      data.error = err.message;
    }
    return adminPage(c, views, 'contacts', data, data.error ? 400 : 200);
  });
}
