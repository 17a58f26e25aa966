import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { checkContactInput, toWrite, type UpsertOptions } from './contact-input.ts';
import { subscribeTo, unsubscribeFrom } from './contact-membership.ts';
import { type ContactListQuery, type ContactPage, contactFilter, listContacts } from './contact-query.ts';
import { emailKey, isValidEmail } from './email.ts';
import { suppressAsWritten, withoutSuppression } from './suppression.ts';
import { hashToken } from './tokens.ts';
import { type Contact, type ContactInput, type ContactStatus, isSuppressedStatus } from './types.ts';

export interface ContactsService {
  upsert(input: ContactInput, options?: UpsertOptions): Promise<Contact>;
  /**
   * Several upserts in one transaction (imports): each exactly what upsert() would do; a bad input
   * refuses the whole call (NotifyError) before anything is written.
   */
  upsertMany(items: { input: ContactInput; options?: UpsertOptions }[]): Promise<void>;
  /** the contacts of those addresses that exist, by email key (see email.ts emailKey) */
  getMany(emails: string[]): Promise<Map<string, Contact>>;
  /** names of the lists each contact left (an upsert naming one does not bring them back), by contact id */
  leftLists(ids: number[]): Promise<Map<number, string[]>>;
  list(query?: ContactListQuery): Promise<ContactPage>;
  count(query?: Pick<ContactListQuery, 'list' | 'segment'>): Promise<number>;
  /** joins (or rejoins) the list; a contact only `transactional` mail went to becomes `subscribed` */
  subscribe(idOrEmail: number | string, list: string): Promise<Contact>;
  /** leaves the list; without a list, unsubscribes from everything exactly as the unsubscribe link does */
  unsubscribe(idOrEmail: number | string, list?: string): Promise<Contact>;
  get(idOrEmail: number | string): Promise<Contact | undefined>;
  /** the opt-out an erased address had (it comes back with it), if it was erased after opting out */
  rememberedStatus(email: string): Promise<ContactStatus | undefined>;
  erase(idOrEmail: number | string): Promise<boolean>;
}

export function createContactsService(ctx: Pick<Context, 'store' | 'clock' | 'events'>): ContactsService {
  const { store, clock } = ctx;
  const get = async (idOrEmail: number | string) => {
    if (typeof idOrEmail === 'number' || /^[0-9]+$/.test(String(idOrEmail))) return store.contacts.getById(Number(idOrEmail));
    if (!isValidEmail(String(idOrEmail).trim())) return undefined;
    return store.contacts.getByEmailKey(emailKey(String(idOrEmail)));
  };
  const rememberedStatus = async (email: string) => {
    const tomb = await store.contacts.tombstoneForEmail(hashToken(emailKey(email)));
    return tomb && isSuppressedStatus(tomb.status) ? (tomb.status as ContactStatus) : undefined;
  };
  const required = async (idOrEmail: number | string) => {
    const contact = await get(idOrEmail);
    if (!contact) throw new NotifyError('NOT_FOUND', `No contact ${JSON.stringify(String(idOrEmail).slice(0, 254))}`, { field: 'contact' });
    return contact;
  };
  return {
    async upsert(input, options = {}) {
      const email = checkContactInput(input);
      // An erased address that had opted out stays opted out if it comes back without an explicit status.
      const remembered = input.status ? undefined : await rememberedStatus(email);
      const now = clock.now();
      const write = toWrite(email, input, options, remembered, now);
      return suppressAsWritten(ctx, write, await store.contacts.upsert(withoutSuppression(write), now));
    },
    upsertMany: (items) => upsertContacts(ctx, clock.now(), items),
    async getMany(emails) {
      return store.contacts.getManyByEmailKey(emails.filter((e) => isValidEmail(e.trim())).map((e) => emailKey(e)));
    },
    leftLists: (ids) => store.lists.leftBy(ids),
    rememberedStatus,
    get,
    list: (query = {}) => listContacts(ctx, query),
    count: async (query = {}) => store.contacts.count(await contactFilter(ctx, countQuery(query))),
    subscribe: async (idOrEmail, listName) => subscribeTo(ctx, await required(idOrEmail), listName),
    unsubscribe: async (idOrEmail, listName) => unsubscribeFrom(ctx, await required(idOrEmail), listName),
    async erase(idOrEmail) {
      const contact = await get(idOrEmail);
      if (!contact) return false;
      return store.contacts.erase(contact.id, hashToken(emailKey(contact.email)), clock.now());
    },
  };
}

/** count() looks at the list and the segment only; anything that is not a query object goes on to be refused as such */
function countQuery(query: Pick<ContactListQuery, 'list' | 'segment'>): ContactListQuery {
  return typeof query === 'object' && query !== null && !Array.isArray(query) ? { list: query.list, segment: query.segment } : (query as ContactListQuery);
}

/** ContactsService.upsertMany: every input checked before one write of them all, then the opt-outs among them applied */
async function upsertContacts(ctx: Pick<Context, 'store' | 'clock' | 'events'>, now: number, items: { input: ContactInput; options?: UpsertOptions }[]): Promise<void> {
  const { store } = ctx;
  const checked = items.map(({ input, options }) => ({ email: checkContactInput(input), input, options: options ?? {} }));
  const hashes = checked.filter((c) => !c.input.status).map((c) => hashToken(emailKey(c.email)));
  const tombs = await store.contacts.tombstonesForEmails(hashes);
  const remembered = (email: string) => {
    const status = tombs.get(hashToken(emailKey(email)));
    return status && isSuppressedStatus(status) ? (status as ContactStatus) : undefined;
  };
  const writes = checked.map((c) => toWrite(c.email, c.input, c.options, c.input.status ? undefined : remembered(c.email), now));
  await store.contacts.upsertMany(writes.map(withoutSuppression), now);
  const suppressing = writes.filter((w) => w.status && isSuppressedStatus(w.status));
  if (suppressing.length === 0) return;
  const stored = await store.contacts.getManyByEmailKey(suppressing.map((w) => w.email_key));
  for (const write of suppressing) {
    const contact = stored.get(write.email_key);
    if (contact) stored.set(write.email_key, await suppressAsWritten(ctx, write, contact));
  }
}
