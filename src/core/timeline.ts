import type { Context } from '../context.ts';
import type { Contact } from './types.ts';

/** One thing that happened to a person, for the admin timeline. */
export type TimelineEntry = { at: Date } & (
  | { kind: 'created'; status: string }
  | { kind: 'send'; status: string; subject: string; campaign: { id: number; name: string } | null; sequence: string | null; error: string | null }
  | { kind: 'event'; type: string; campaign: { id: number; name: string } | null; link: number | null; machine: string | null; source: string | null }
  | { kind: 'status'; list: string | null; from: string | null; to: string }
);

/** the newest entries of each kind read; the merged timeline keeps as many */
export const TIMELINE_LIMIT = 200;

/**
 * The person's sends, opens, clicks, bounces, complaints, unsubscribes and status changes (their own
 * and each list's), newest first, and when the contact was created with the status it started
 * with (the first recorded change's `from`, else the current status).
 */
export async function contactTimeline(ctx: Pick<Context, 'store'>, contact: Contact, limit = TIMELINE_LIMIT): Promise<TimelineEntry[]> {
  const { sends, events, changes } = await ctx.store.history.forContact(contact.id, limit);
  const campaign = (id: number | null, name: string | null) => (id === null ? null : { id, name: name ?? `#${id}` });
  const entries: TimelineEntry[] = [
    ...sends.map((s): TimelineEntry => ({ kind: 'send', at: new Date(s.sent_at ?? s.created_at), status: s.status, subject: s.subject, campaign: campaign(s.campaign_id, s.campaign), sequence: s.sequence, error: s.error })),
    ...events.map((e): TimelineEntry => ({ kind: 'event', at: new Date(e.created_at), type: e.type, campaign: campaign(e.campaign_id, e.campaign), link: e.link_index, machine: e.is_machine ? (e.machine_reason ?? 'machine') : null, source: e.source })),
    ...changes.map((c): TimelineEntry => ({ kind: 'status', at: new Date(c.created_at), list: c.list, from: c.from_status, to: c.to_status })),
  ];
  // the oldest change of the contact's own status says what it was before
  const firstOwn = changes.filter((c) => c.list === null).at(-1);
  const complete = changes.length < limit;
  if (complete) entries.push({ kind: 'created', at: contact.created_at, status: firstOwn?.from_status ?? contact.status });
  // newest first; at the same instant the cause (a send) after its effects, creation last
  const order = { created: 0, send: 1, status: 2, event: 3 } as const;
  entries.sort((a, b) => b.at.getTime() - a.at.getTime() || order[b.kind] - order[a.kind]);
  return entries.slice(0, limit);
}
