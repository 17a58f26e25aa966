import type { Context } from '../context.ts';
import { suppressIfChanged } from './suppression.ts';
import { hashToken, isWellFormedToken } from './tokens.ts';
import type { Contact } from './types.ts';

/**
 * The unsubscribe flow: by unsubscribe_token, whatever the contact's status, to
 * `unsubscribed`, through suppressIfChanged (enrollments cancelled, event row, app event).
 * "Expired" is the token of an erased contact (its hash survives in a tombstone).
 */
export type UnsubscribeLookup = { outcome: 'valid'; contact: Contact } | { outcome: 'invalid' } | { outcome: 'expired' };

export type UnsubscribeResult =
  | { outcome: 'unsubscribed'; contact: Contact; /** false when the contact had already unsubscribed */ changed: boolean }
  | { outcome: 'invalid' }
  | { outcome: 'expired' };

export interface UnsubscribeOptions {
  source: 'link' | 'one-click';
  /** token of the send whose link was used (`?s=`), to attribute the unsubscribe to its campaign */
  sendToken?: string | null;
}

type Ctx = Pick<Context, 'store' | 'clock' | 'events'>;

export async function findUnsubscribe(ctx: Pick<Context, 'store'>, token: string | undefined): Promise<UnsubscribeLookup> {
  // Malformed tokens never reach the database.
  if (!isWellFormedToken(token)) return { outcome: 'invalid' };
  const contact = await ctx.store.contacts.getByUnsubscribeToken(token);
  if (contact) return { outcome: 'valid', contact };
  return (await ctx.store.contacts.tombstoneForToken(hashToken(token))) ? { outcome: 'expired' } : { outcome: 'invalid' };
}

/** Idempotent: a second use (or a mail provider's duplicate one-click POST) changes nothing and fires nothing. */
export async function unsubscribe(ctx: Ctx, token: string | undefined, opts: UnsubscribeOptions): Promise<UnsubscribeResult> {
  const found = await findUnsubscribe(ctx, token);
  if (found.outcome !== 'valid') return found;
  // The send is looked up first so the status change, event row and campaign counter land in one
  // transaction; of several concurrent requests only the one that changes the status acts.
  const send = await attributedSend(ctx, found.contact.id, opts.sendToken);
  const { contact, changed } = await suppressIfChanged(ctx, found.contact, 'unsubscribed', { source: opts.source, sendId: send?.id ?? null, campaignId: send?.campaign_id ?? null });
  return { outcome: 'unsubscribed', contact, changed };
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
