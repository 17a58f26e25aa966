import type { Context } from '../context.ts';
import type { Contact, ContactStatus } from './types.ts';

type SuppressReason = 'unsubscribed' | 'bounced' | 'complained';

export interface SuppressOptions {
  /** send the action is attributed to, for per-campaign stats */
  sendId?: number | null;
  campaignId?: number | null;
  source?: 'link' | 'one-click' | 'api';
  provider?: string | null;
  message_id?: string | null;
}

const EVENT_TYPE: Record<SuppressReason, string> = { unsubscribed: 'unsubscribe', bounced: 'bounce', complained: 'complaint' };

/**
 * The one path by which a contact becomes suppressed (spec part 3): status set, active drip
 * enrollments cancelled, an event row written, the application event fired.
 * Returns the updated contact.
 */
export async function suppressContact(
  ctx: Pick<Context, 'store' | 'clock' | 'events'>,
  contact: Contact,
  status: SuppressReason,
  opts: SuppressOptions = {},
): Promise<Contact> {
  const now = ctx.clock.now();
  await ctx.store.contacts.setStatus(contact.id, status, now);
  await ctx.store.enrollments.cancelForContact(contact.id, now);
  await ctx.store.events.insertMany([
    {
      type: EVENT_TYPE[status],
      send_id: opts.sendId ?? null,
      contact_id: contact.id,
      campaign_id: opts.campaignId ?? null,
      link_index: null,
      metadata: { ...(opts.provider ? { provider: opts.provider } : {}), ...(opts.message_id ? { message_id: opts.message_id } : {}), ...(opts.source ? { source: opts.source } : {}) },
      is_machine: 0,
      machine_reason: null,
      created_at: now,
    },
  ]);
  const updated: Contact = { ...contact, status: status as ContactStatus, updated_at: new Date(now) };
  if (status === 'unsubscribed') ctx.events.emit('notify:contact.unsubscribed', { contact: updated, source: opts.source ?? 'api', sendId: opts.sendId ?? null });
  else if (status === 'bounced') ctx.events.emit('notify:contact.bounced', { contact: updated, message_id: opts.message_id ?? null, provider: opts.provider ?? null });
  else ctx.events.emit('notify:contact.complained', { contact: updated, message_id: opts.message_id ?? null, provider: opts.provider ?? null });
  return updated;
}
