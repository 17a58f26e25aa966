import type { Hono } from 'hono';
import type { Context } from '../../context.ts';
import type { ContactsService } from '../../core/contacts.ts';
import type { ListsService } from '../../core/lists.ts';
import { contactTimeline, type TimelineEntry } from '../../core/timeline.ts';
import { CONTACT_STATUSES, type ContactStatus } from '../../core/types.ts';
import { isNotifyError } from '../../errors.ts';
import type { Views } from '../../render/views.ts';
import { adminPage, fmtDate, notFound } from './render.ts';

const PER_PAGE = 50;

/**
 * GET /notify/admin/lists (name, description, public, subscribers), GET /notify/admin/contacts
 * (search, filter by list and status, cursor pages) and GET /notify/admin/contacts/<id> (the person
 * and their timeline). Read-only, like the other admin pages.
 */
export function registerAudiencePages(app: Hono, { ctx, views, contacts, lists }: { ctx: Context; views: Views; contacts: ContactsService; lists: ListsService }): void {

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

  app.get('/notify/admin/contacts/:id', async (c) => {
    const id = c.req.param('id');
    const person = /^[0-9]{1,15}$/.test(id) ? await contacts.get(Number(id)) : undefined;
    if (!person) return notFound(c, views, 'No such contact.');
    return adminPage(c, views, 'contact', {
      title: person.email,
      contact: {
        id: person.id,
        email: person.email,
        name: person.name ?? '',
        status: person.status,
        lists: person.lists.join(', '),
        attributes: Object.entries(person.attributes).map(([key, value]) => ({ key, value: typeof value === 'string' ? value : JSON.stringify(value) })),
        created: fmtDate(person.created_at),
        consent: person.consent_at ? `${fmtDate(person.consent_at)}${person.consent_source ? ` (${person.consent_source})` : ''}` : '',
      },
      timeline: (await contactTimeline(ctx, person)).map(timelineRow),
    });
  });
}

const EVENT_LABEL: Record<string, string> = { open: 'Opened', click: 'Clicked', soft_bounce: 'Soft bounce', bounce: 'Bounced', complaint: 'Complained', unsubscribe: 'Unsubscribed' };

/** One table row of the timeline: when, what, and the detail (a campaign linked by id). */
function timelineRow(e: TimelineEntry) {
  const base = { when: fmtDate(e.at), kind: e.kind, campaign: null as { href: string; name: string } | null, what: '', detail: '' };
  const campaignOf = (ref: { id: number; name: string } | null) => ref && { href: `/notify/admin/campaigns/${ref.id}`, name: ref.name };
  switch (e.kind) {
    case 'created':
      return { ...base, what: 'Contact created', detail: `status ${e.status}` };
    case 'send':
      return { ...base, what: `Email ${e.status}`, campaign: campaignOf(e.campaign), detail: [e.subject, e.sequence ? `sequence ${e.sequence}` : '', e.error ?? ''].filter(Boolean).join(' · ') };
    case 'event':
      return {
        ...base,
        what: EVENT_LABEL[e.type] ?? e.type,
        campaign: campaignOf(e.campaign),
        detail: [e.link !== null ? `link ${e.link + 1}` : '', e.machine ? `machine: ${e.machine}` : '', e.source ?? ''].filter(Boolean).join(' · '),
      };
    case 'status':
      if (e.list === null) return { ...base, what: 'Status changed', detail: `${e.from ?? '–'} → ${e.to}` };
      return { ...base, what: e.to === 'subscribed' ? `Joined list ${e.list}` : `Left list ${e.list}`, detail: e.from ? `${e.from} → ${e.to}` : e.to };
  }
}
