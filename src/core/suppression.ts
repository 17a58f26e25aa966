import type { Context } from '../context.ts';
import { eventContact, type NotifyEventMap } from './events.ts';
import type { ContactWrite } from './storage/contacts.ts';
import type { CounterName } from './storage/counters.ts';
import type { EventRow } from './storage/events.ts';
import type { StoreTx } from './storage/index.ts';
import type { OutboundEvent } from './storage/outbound.ts';
import { type Contact, type ContactStatus, isSuppressedStatus } from './types.ts';

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
  /** the contact was created with this status (the event says `created: true`) */
  created?: boolean;
}

const EVENT_TYPE: Record<SuppressReason, string> = { unsubscribed: 'unsubscribe', bounced: 'bounce', complained: 'complaint' };
const COUNTER: Record<SuppressReason, CounterName> = { unsubscribed: 'unsubscribed', bounced: 'bounced', complained: 'complained' };

type Ctx = Pick<Context, 'store' | 'clock'>;

/**
 * The one path by which a contact becomes suppressed: status set, active drip
 * enrollments cancelled, an event row written, the campaign counter counted and the application
 * event written to the outbox, all in ONE transaction (a crash in between leaves none of it); the
 * event reaches in-process listeners after the commit. Returns the updated contact.
 */
export async function suppressContact(ctx: Ctx, contact: Contact, status: SuppressReason, opts: SuppressOptions = {}): Promise<Contact> {
  return (await apply(ctx, contact, status, opts, false)).contact;
}

/**
 * As suppressContact, but only when the contact does not have that status yet: of several
 * concurrent calls exactly one performs the flow (`changed: true`); the others change nothing
 * and fire nothing beyond re-cancelling enrollments and waiting sends (cheap, idempotent).
 */
export async function suppressIfChanged(ctx: Ctx, contact: Contact, status: SuppressReason, opts: SuppressOptions = {}): Promise<{ contact: Contact; changed: boolean }> {
  return apply(ctx, contact, status, opts, true);
}

async function apply(ctx: Ctx, contact: Contact, status: SuppressReason, opts: SuppressOptions, onlyIfChanged: boolean) {
  const now = ctx.clock.now();
  const changed = await ctx.store.transaction((tx) => suppressInTransaction(tx, contact, status, opts, onlyIfChanged, now));
  return { contact: changed ? suppressed(contact, status, now) : contact, changed };
}

/**
 * An upsert or import that gives a suppressed status: the row write leaves an existing contact's
 * status as it is (a contact created now gets the status at once, and the store writes its event
 * row and application event with it), and suppressAsWritten() then changes an existing one through
 * the flow above, so its enrollments end and the event fires as for an unsubscribe.
 */
export function withoutSuppression(write: ContactWrite): ContactWrite {
  return write.status && isSuppressedStatus(write.status) ? { ...write, status: undefined, initialStatus: write.status, lift: [] } : write;
}

/** The second half of withoutSuppression(): the asked status through the flow, when the stored contact lacks it. */
export async function suppressAsWritten(ctx: Ctx, write: ContactWrite, stored: Contact): Promise<Contact> {
  const status = write.status;
  if (!status || !isSuppressedStatus(status) || stored.status === status) return stored;
  return (await suppressIfChanged(ctx, stored, status as SuppressReason, { source: 'api' })).contact;
}

/**
 * The contact's enrollments end, and with them the steps waiting for another attempt; campaign
 * sends waiting for one are suppressed (counted so), so no retry ever reaches the contact and the
 * campaign need not wait for it.
 */
async function cancelWaiting(tx: StoreTx, contactId: number, now: number): Promise<void> {
  await tx.enrollments.cancelForContact(contactId, now);
  await tx.sends.cancelWaiting({ contactId }, now);
  const suppressed = await tx.sends.suppressWaiting(contactId, now);
  if (suppressed.size > 0) await tx.counters.add(new Map([...suppressed].map(([campaignId, n]) => [campaignId, { suppressed: n }])));
}

/**
 * The writes of a suppression inside the caller's transaction (so a webhook receipt lands with
 * them), its application event among them. Returns whether the status changed.
 */
export async function suppressInTransaction(tx: StoreTx, contact: Contact, status: SuppressReason, opts: SuppressOptions, onlyIfChanged: boolean, now: number): Promise<boolean> {
  const contactId = contact.id;
  if (onlyIfChanged) {
    if (!(await tx.contacts.changeStatus(contactId, status, now))) {
      await cancelWaiting(tx, contactId, now);
      return false;
    }
  } else await tx.contacts.setStatus(contactId, status, now);
  await cancelWaiting(tx, contactId, now);
  const records = suppressionRecords(suppressed(contact, status, now), status, opts, now);
  await tx.events.insertMany([records.row]);
  if (opts.campaignId) await tx.counters.add(new Map([[opts.campaignId, { [COUNTER[status]]: 1 }]]));
  // a late report of a message sent before an auto-paused campaign was resumed: not the new window's
  if (opts.campaignId && opts.sendId && status !== 'unsubscribed') await tx.campaigns.addToAutoPauseBase(opts.campaignId, opts.sendId);
  await tx.outbox.add([records.event], now);
  return true;
}

/**
 * What a suppression records beside the status: the event row (the person's timeline) and the
 * application event. Also written by the store for a contact created with a suppressed status,
 * in the transaction that creates it (store/repos/contacts/created-suppressed.ts).
 */
export function suppressionRecords(contact: Contact, status: SuppressReason, opts: SuppressOptions, now: number): { row: EventRow; event: OutboundEvent } {
  const row: EventRow = {
    type: EVENT_TYPE[status],
    send_id: opts.sendId ?? null,
    contact_id: contact.id,
    campaign_id: opts.campaignId ?? null,
    link_index: null,
    metadata: { ...(opts.provider ? { provider: opts.provider } : {}), ...(opts.message_id ? { message_id: opts.message_id } : {}), ...(opts.source ? { source: opts.source } : {}) },
    is_machine: 0,
    machine_reason: null,
    created_at: now,
  };
  return { row, event: suppressionEvent(contact, status, opts) };
}

const suppressed = (contact: Contact, status: SuppressReason, now: number): Contact => ({ ...contact, status: status as ContactStatus, updated_at: new Date(now) });

/**
 * `notify:contact.unsubscribed` / `.bounced` / `.complained`: listeners get the updated Contact,
 * the webhook the same payload with the contact as `{ id, email }`.
 */
function suppressionEvent(contact: Contact, status: SuppressReason, opts: SuppressOptions): OutboundEvent {
  const created = opts.created ? { created: true as const } : {};
  if (status === 'unsubscribed') return unsubscribedEvent({ contact, source: opts.source ?? 'api', sendId: opts.sendId ?? null, ...created });
  const local = { contact, message_id: opts.message_id ?? null, provider: opts.provider ?? null, ...created };
  return { type: status === 'bounced' ? 'notify:contact.bounced' : 'notify:contact.complained', data: { ...local, contact: eventContact(contact) }, local };
}

/** The unsubscribe event, from everything or (with `list`) from one list. */
export function unsubscribedEvent(local: NotifyEventMap['notify:contact.unsubscribed']): OutboundEvent {
  return { type: 'notify:contact.unsubscribed', data: { ...local, contact: eventContact(local.contact) }, local };
}
