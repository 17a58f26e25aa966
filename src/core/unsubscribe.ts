import type { Context } from '../context.ts';
import { type SuppressOptions, suppressIfChanged, unsubscribedEvent } from './suppression.ts';
import { hashToken, isWellFormedToken, readSendUnsubscribeToken } from './tokens.ts';
import type { Contact } from './types.ts';

/**
 * The unsubscribe flow: by unsubscribe_token, whatever the contact's status, to
 * `unsubscribed`, through suppressIfChanged (enrollments cancelled, event row, app event).
 * "Expired" is the token of an erased contact (its hash survives in a tombstone).
 */
export type UnsubscribeLookup = { outcome: 'valid'; contact: Contact } | { outcome: 'invalid' } | { outcome: 'expired' };

export type UnsubscribeResult =
  | {
      outcome: 'unsubscribed';
      contact: Contact;
      /** false when the contact had already unsubscribed (or left that list) */
      changed: boolean;
      /** the list the person left (unsubscribeScope 'list', a list campaign's link); absent: from everything */
      list?: string;
    }
  | { outcome: 'invalid' }
  | { outcome: 'expired' };

export interface UnsubscribeOptions {
  source: 'link' | 'one-click';
  /** token of the send whose link was used (`?s=`), to attribute the unsubscribe to its campaign */
  sendToken?: string | null;
}

type Ctx = Pick<Context, 'store' | 'clock' | 'config'>;

export async function findUnsubscribe(ctx: Pick<Context, 'store'>, token: string | undefined): Promise<UnsubscribeLookup> {
  // Malformed tokens never reach the database.
  if (!isWellFormedToken(token)) return { outcome: 'invalid' };
  const contact = await ctx.store.contacts.getByUnsubscribeToken(token);
  if (contact) return { outcome: 'valid', contact };
  return (await ctx.store.contacts.tombstoneForToken(hashToken(token))) ? { outcome: 'expired' } : { outcome: 'invalid' };
}

/**
 * What the short token of a List-Unsubscribe link stands for: the contact's unsubscribe token and
 * the send's token, so the short link then runs the very flow of the long one. A send whose person
 * was erased (its row kept without a contact) is `expired`, as the long link is.
 */
export async function resolveSendUnsubscribe(ctx: Pick<Context, 'store' | 'secret'>, token: string | undefined): Promise<{ outcome: 'valid'; token: string; sendToken: string } | { outcome: 'invalid' } | { outcome: 'expired' }> {
  const id = readSendUnsubscribeToken(ctx.secret, token);
  if (id === undefined) return { outcome: 'invalid' };
  const send = await ctx.store.tracking.sendById(id);
  if (!send) return { outcome: 'invalid' };
  const contact = send.contact_id == null ? undefined : await ctx.store.contacts.getById(send.contact_id);
  return contact ? { outcome: 'valid', token: contact.unsubscribe_token, sendToken: send.token } : { outcome: 'expired' };
}

/** Idempotent: a second use (or a mail provider's duplicate one-click POST) changes nothing and fires nothing. */
export async function unsubscribe(ctx: Ctx, token: string | undefined, opts: UnsubscribeOptions): Promise<UnsubscribeResult> {
  const found = await findUnsubscribe(ctx, token);
  if (found.outcome !== 'valid') return found;
  // The send is looked up first so the status change, event row and campaign counter land in one
  // transaction; of several concurrent requests only the one that changes the status acts.
  const send = await attributedSend(ctx, found.contact.id, opts.sendToken);
  const list = await scopedList(ctx, send?.campaign_id);
  if (list) return leaveList(ctx, found.contact, list, { source: opts.source, sendId: send?.id ?? null, campaignId: send?.campaign_id ?? null });
  const { contact, changed } = await suppressIfChanged(ctx, found.contact, 'unsubscribed', { source: opts.source, sendId: send?.id ?? null, campaignId: send?.campaign_id ?? null });
  return { outcome: 'unsubscribed', contact, changed };
}

/**
 * The list the link of that send leaves under unsubscribeScope 'list': its campaign's list.
 * undefined (everything) for scope 'all', a campaign to everyone, a drip step or a one-off send.
 */
export async function unsubscribeList(ctx: Pick<Context, 'store' | 'config'>, contact: Contact, sendToken: string | null | undefined): Promise<string | undefined> {
  if (ctx.config.unsubscribeScope !== 'list') return undefined;
  const send = await attributedSend(ctx, contact.id, sendToken);
  return (await scopedList(ctx, send?.campaign_id))?.name;
}

async function scopedList(ctx: Pick<Context, 'store' | 'config'>, campaignId: number | null | undefined) {
  if (ctx.config.unsubscribeScope !== 'list' || !campaignId) return undefined;
  const campaign = await ctx.store.campaigns.getById(campaignId);
  return campaign?.list ? ctx.store.lists.byName(campaign.list) : undefined;
}

/**
 * The person leaves one list and stays subscribed to the others (unsubscribeScope 'list': the list of
 * the campaign whose link they used; the preference centre). Membership, event row (metadata names the list), campaign
 * counter and `notify:contact.unsubscribed` (with `list`) in one transaction; only the request that changes the membership writes and fires.
 */
export async function leaveList(ctx: Omit<Ctx, 'config'>, contact: Contact, list: { id: number; name: string }, opts: Required<Pick<SuppressOptions, 'source' | 'sendId' | 'campaignId'>>): Promise<UnsubscribeResult & { outcome: 'unsubscribed' }> {
  const now = ctx.clock.now();
  const updated = { ...contact, lists: contact.lists.filter((l) => l !== list.name) };
  const changed = await ctx.store.transaction(async (tx) => {
    if (!(await tx.lists.leave(list.id, contact.id, now))) return false;
    await tx.events.insertMany([
      {
        type: 'unsubscribe',
        send_id: opts.sendId,
        contact_id: contact.id,
        campaign_id: opts.campaignId,
        link_index: null,
        metadata: { source: opts.source, list: list.name },
        is_machine: 0,
        machine_reason: null,
        created_at: now,
      },
    ]);
    if (opts.campaignId) await tx.counters.add(new Map([[opts.campaignId, { unsubscribed: 1 }]]));
    await tx.outbox.add([unsubscribedEvent({ contact: updated, source: opts.source, sendId: opts.sendId, list: list.name })], now);
    return true;
  });
  return { outcome: 'unsubscribed', contact: updated, changed, list: list.name };
}

/** Only a send that went to this very contact can take the credit. */
async function attributedSend(ctx: Pick<Context, 'store'>, contactId: number, sendToken: string | null | undefined) {
  if (!isWellFormedToken(sendToken)) return undefined;
  const send = await ctx.store.tracking.sendByToken(sendToken);
  return send && send.contact_id === contactId ? send : undefined;
}

/** `ann@example.com` -> `a**@example.com`: enough to recognise, not to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  const local = email.slice(0, at);
  return `${local[0]}${'*'.repeat(Math.min(Math.max(local.length - 1, 2), 8))}${email.slice(at)}`;
}
