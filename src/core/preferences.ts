import type { Context } from '../context.ts';
import type { Membership } from './storage/lists.ts';
import { suppressIfChanged } from './suppression.ts';
import type { Contact } from './types.ts';
import { findUnsubscribe, leaveList } from './unsubscribe.ts';

/**
 * The preference centre, addressed by the contact's unsubscribe token: the lists the person is or
 * was on and every public list. Reading changes nothing (mail scanners fetch every link); a
 * submitted form sets each shown list to what was ticked, or unsubscribes from everything.
 */
export type PreferencesResult = { outcome: 'valid'; contact: Contact; lists: Membership[] } | { outcome: 'invalid' } | { outcome: 'expired' };

export type PreferencesChoice = { everything: true } | { everything?: false; /** ids of the lists ticked */ lists: number[] };

type Ctx = Pick<Context, 'store' | 'clock' | 'events'>;

export async function readPreferences(ctx: Pick<Context, 'store'>, token: string | undefined): Promise<PreferencesResult> {
  const found = await findUnsubscribe(ctx, token);
  if (found.outcome !== 'valid') return found;
  return { outcome: 'valid', contact: found.contact, lists: await ctx.store.lists.membershipsOf(found.contact.id) };
}

/**
 * Applies a submitted form. Only lists the page showed can change (an id of any other list is
 * ignored). Ticking a list is the person's own opt-in: it lifts an `unsubscribed` or
 * `transactional` contact to `subscribed`; a bounced or complained address is never lifted.
 */
export async function applyPreferences(ctx: Ctx, token: string | undefined, choice: PreferencesChoice): Promise<PreferencesResult> {
  const found = await readPreferences(ctx, token);
  if (found.outcome !== 'valid') return found;
  let { contact } = found;
  if (choice.everything) {
    ({ contact } = await suppressIfChanged(ctx, contact, 'unsubscribed', { source: 'preferences' }));
    return { outcome: 'valid', contact, lists: found.lists };
  }
  const ticked = new Set(choice.lists);
  const now = ctx.clock.now();
  // lifted first, so the lists joined below count as a subscriber's joins (triggered sequences, events)
  if (found.lists.some((l) => ticked.has(l.id)) && (contact.status === 'unsubscribed' || contact.status === 'transactional')) {
    await ctx.store.contacts.changeStatus(contact.id, 'subscribed', now);
  }
  for (const list of found.lists) {
    if (ticked.has(list.id) && list.status !== 'subscribed') await ctx.store.lists.setMembership(list.id, contact.id, 'subscribed', now);
    if (!ticked.has(list.id) && list.status === 'subscribed') await leaveList(ctx, contact, list, { source: 'preferences', sendId: null, campaignId: null });
  }
  return readPreferences(ctx, token);
}
