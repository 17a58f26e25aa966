import type { Context } from '../context.ts';
import type { CounterName } from './storage/counters.ts';
import type { StoreTx } from './storage/index.ts';
import type { Contact, ContactStatus } from './types.ts';

/** where an unsubscribe came from: the link (GET, confirm button), RFC 8058 one-click, the API, the preference centre */
export type UnsubscribeSource = 'link' | 'one-click' | 'api' | 'preferences';

export type SuppressReason = 'unsubscribed' | 'bounced' | 'complained';

export interface SuppressOptions {
  /** send the action is attributed to, for per-campaign stats */
  sendId?: number | null;
  /** campaign of that send: its `unsubscribed` / `bounced` / `complained` counter goes up by one */
  campaignId?: number | null;
  source?: UnsubscribeSource;
  provider?: string | null;
  message_id?: string | null;
}

const EVENT_TYPE: Record<SuppressReason, string> = { unsubscribed: 'unsubscribe', bounced: 'bounce', complained: 'complaint' };
const COUNTER: Record<SuppressReason, CounterName> = { unsubscribed: 'unsubscribed', bounced: 'bounced', complained: 'complained' };

type Ctx = Pick<Context, 'store' | 'clock' | 'events'>;

/**
 * The one path by which a contact becomes suppressed: status set, active drip
 * enrollments cancelled, an event row written, the campaign counter counted, all in ONE
 * transaction (a crash in between leaves none of it); then the application event fires.
 * Returns the updated contact.
 */
export async function suppressContact(ctx: Ctx, contact: Contact, status: SuppressReason, opts: SuppressOptions = {}): Promise<Contact> {
  return (await apply(ctx, contact, status, opts, false)).contact;
}

/**
 * As suppressContact, but only when the contact does not have that status yet: of several
 * concurrent calls exactly one performs the flow (`changed: true`); the others change nothing
 * and fire nothing beyond re-cancelling enrollments (cheap, idempotent).
 */
export async function suppressIfChanged(ctx: Ctx, contact: Contact, status: SuppressReason, opts: SuppressOptions = {}): Promise<{ contact: Contact; changed: boolean }> {
  return apply(ctx, contact, status, opts, true);
}

async function apply(ctx: Ctx, contact: Contact, status: SuppressReason, opts: SuppressOptions, onlyIfChanged: boolean) {
  const now = ctx.clock.now();
  const changed = await ctx.store.transaction((tx) => suppressInTransaction(tx, contact.id, status, opts, onlyIfChanged, now));
  if (!changed) return { contact, changed };
  return { contact: emitSuppressed(ctx, contact, status, opts, now), changed };
}

/** The contact's enrollments end, and with them the steps waiting for another attempt. */
async function cancelDrips(tx: StoreTx, contactId: number, now: number): Promise<void> {
  await tx.enrollments.cancelForContact(contactId, now);
  await tx.sends.cancelWaiting({ contactId }, now);
}

/**
 * The writes of a suppression inside the caller's transaction (so a webhook receipt lands with
 * them). Returns whether the status changed; the caller fires emitSuppressed after commit.
 */
export async function suppressInTransaction(tx: StoreTx, contactId: number, status: SuppressReason, opts: SuppressOptions, onlyIfChanged: boolean, now: number): Promise<boolean> {
  if (onlyIfChanged) {
    if (!(await tx.contacts.changeStatus(contactId, status, now))) {
      await cancelDrips(tx, contactId, now);
      return false;
    }
  } else await tx.contacts.setStatus(contactId, status, now);
  await cancelDrips(tx, contactId, now);
  await tx.events.insertMany([
    {
      type: EVENT_TYPE[status],
      send_id: opts.sendId ?? null,
      contact_id: contactId,
      campaign_id: opts.campaignId ?? null,
      link_index: null,
      metadata: { ...(opts.provider ? { provider: opts.provider } : {}), ...(opts.message_id ? { message_id: opts.message_id } : {}), ...(opts.source ? { source: opts.source } : {}) },
      is_machine: 0,
      machine_reason: null,
      created_at: now,
    },
  ]);
  if (opts.campaignId) await tx.counters.add(new Map([[opts.campaignId, { [COUNTER[status]]: 1 }]]));
  return true;
}

/** The application event of a suppression that changed the status; returns the updated contact. */
export function emitSuppressed(ctx: Pick<Context, 'events'>, contact: Contact, status: SuppressReason, opts: SuppressOptions, now: number): Contact {
  const updated: Contact = { ...contact, status: status as ContactStatus, updated_at: new Date(now) };
  if (status === 'unsubscribed') ctx.events.emit('notify:contact.unsubscribed', { contact: updated, source: opts.source ?? 'api', sendId: opts.sendId ?? null });
  else if (status === 'bounced') ctx.events.emit('notify:contact.bounced', { contact: updated, message_id: opts.message_id ?? null, provider: opts.provider ?? null });
  else ctx.events.emit('notify:contact.complained', { contact: updated, message_id: opts.message_id ?? null, provider: opts.provider ?? null });
  return updated;
}
