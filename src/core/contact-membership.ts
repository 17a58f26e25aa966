import type { Context } from '../context.ts';
import { requireList } from './lists.ts';
import { suppressIfChanged } from './suppression.ts';
import type { Contact } from './types.ts';
import { leaveList } from './unsubscribe.ts';

/** Joins (or rejoins) the list; a contact only `transactional` mail went to becomes `subscribed`. */
export async function subscribeTo(ctx: Pick<Context, 'store' | 'clock' | 'events'>, contact: Contact, listName: string): Promise<Contact> {
  const list = await requireList(ctx, listName);
  const now = ctx.clock.now();
  // Joining a list is the first opt-in of an address that only had one-off mail; the status
  // changes first so the join counts as a subscriber's (triggered sequences, events).
  if (contact.status === 'transactional') await ctx.store.contacts.changeStatus(contact.id, 'subscribed', now);
  await ctx.store.lists.setMembership(list.id, contact.id, 'subscribed', now);
  return (await ctx.store.contacts.getById(contact.id))!;
}

/** Leaves the list; without a list, unsubscribes from everything exactly as the unsubscribe link does. */
export async function unsubscribeFrom(ctx: Pick<Context, 'store' | 'clock' | 'events'>, contact: Contact, listName: string | undefined): Promise<Contact> {
  if (listName === undefined || listName === null) {
    return (await suppressIfChanged(ctx, contact, 'unsubscribed', { source: 'api' })).contact;
  }
  const list = await requireList(ctx, listName);
  // a member leaving is an unsubscribe as the preference centre's (event row, app event); a non-member is only kept off the list
  const { changed } = await leaveList(ctx, contact, list, { source: 'api', sendId: null, campaignId: null });
  if (!changed) await ctx.store.lists.setMembership(list.id, contact.id, 'unsubscribed', ctx.clock.now());
  return (await ctx.store.contacts.getById(contact.id))!;
}
