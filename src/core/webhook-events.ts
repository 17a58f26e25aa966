import { createHash } from 'node:crypto';
import type { Context } from '../context.ts';
import type { ParsedWebhookEvent } from '../webhooks/contract.ts';
import { emailKey } from './email.ts';
import type { StoreTx } from './storage/index.ts';
import { type SuppressOptions, type SuppressReason, suppressInTransaction } from './suppression.ts';
import type { SendRecord } from './types.ts';

export interface WebhookApplyResult {
  /** events in the delivery */
  received: number;
  /** events applied now (suppressions, including ones that found the status already set, and soft bounces) */
  applied: number;
  /** events whose id was already applied by an earlier delivery */
  duplicates: number;
  /** bounce or complaint events for an address that is no contact */
  unknownContacts: number;
}

type Ctx = Pick<Context, 'store' | 'clock'>;

/**
 * Applies verified webhook events: bounce -> contact `bounced`, complaint ->
 * `complained` (both through the suppression flow: enrollments cancelled, event row, campaign
 * counter, application event in the outbox), soft_bounce -> a `soft_bounce` event row only. Each event's
 * receipt is written in the same transaction as its effects, so a redelivery (same provider id)
 * changes nothing, and a failure stores neither (nor an event). Application events fire after the commit.
 *
 * `fallbackId` identifies the delivery for events that carry no id of their own (a body hash).
 */
export async function applyWebhookEvents(ctx: Ctx, provider: string, events: ParsedWebhookEvent[], fallbackId: string): Promise<WebhookApplyResult> {
  const keyed = events.map((event, i) => ({ event, key: receiptKey(event.id ?? `${fallbackId}:${i}`) }));
  const result: WebhookApplyResult = { received: events.length, applied: 0, duplicates: 0, unknownContacts: 0 };
  if (keyed.length === 0) return result;
  const now = ctx.clock.now();
  await ctx.store.transaction(async (tx) => {
    const fresh = await tx.webhookReceipts.claim(provider, keyed.map((k) => k.key), now);
    Object.assign(result, { applied: 0, duplicates: 0, unknownContacts: 0 });
    for (const { event, key } of keyed) {
      if (!fresh.delete(key)) {
        result.duplicates++;
        continue;
      }
      if ((await applyOne(tx, provider, event, now)) === 'unknown') result.unknownContacts++;
      else result.applied++;
    }
  });
  return result;
}

/** 'unknown' when the address is no contact's (a soft bounce is recorded all the same). */
async function applyOne(tx: StoreTx, provider: string, event: ParsedWebhookEvent, now: number): Promise<'applied' | 'unknown'> {
  const key = emailKey(event.email);
  const contact = await tx.contacts.getByEmailKey(key);
  const send = event.message_id ? await sendByMessageId(tx, event.message_id) : undefined;
  // The send counts for its campaign only when it went to this address.
  const attributed = send && (contact ? send.contact_id === contact.id : emailKey(send.to_email) === key) ? send : undefined;
  const message_id = event.message_id || null;
  if (event.type === 'soft_bounce') {
    await tx.events.insertMany([
      {
        type: 'soft_bounce',
        send_id: attributed?.id ?? null,
        contact_id: contact?.id ?? null,
        campaign_id: attributed?.campaign_id ?? null,
        link_index: null,
        metadata: { provider, ...(message_id ? { message_id } : {}) },
        is_machine: 0,
        machine_reason: null,
        created_at: now,
      },
    ]);
    return 'applied';
  }
  if (!contact) return 'unknown';
  const status: SuppressReason = event.type === 'bounce' ? 'bounced' : 'complained';
  const opts: SuppressOptions = { sendId: attributed?.id ?? null, campaignId: attributed?.campaign_id ?? null, provider, message_id };
  await suppressInTransaction(tx, contact, status, opts, true, now);
  return 'applied';
}

/** Providers report a Message-ID with or without its angle brackets; the send stored one form. */
async function sendByMessageId(tx: StoreTx, id: string): Promise<SendRecord | undefined> {
  const exact = await tx.sends.getByMessageId(id);
  if (exact) return exact;
  const other = /^<.*>$/.test(id) ? id.slice(1, -1) : id.includes('@') ? `<${id}>` : undefined;
  return other ? tx.sends.getByMessageId(other) : undefined;
}

/** Receipt keys stay short whatever a provider sends. */
function receiptKey(id: string): string {
  return id.length <= 200 ? id : `sha256:${createHash('sha256').update(id).digest('hex')}`;
}
