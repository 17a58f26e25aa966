import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { emailKey, isValidEmail, normalizeEmail } from './email.ts';
import { hashToken, newToken } from './tokens.ts';
import { requireList } from './lists.ts';
import type { IssuedLink } from './optin.ts';
import { requireReferences } from './segment-references.ts';
import { parseSegment, type Segment } from './segments.ts';
import { leaveList } from './unsubscribe.ts';
import { suppressIfChanged } from './suppression.ts';
import type { ContactFilter, ContactWrite } from './storage/contacts.ts';
import { CONTACT_STATUSES, type Contact, type ContactInput, type ContactStatus, isSuppressedStatus } from './types.ts';

const MAX_ATTRIBUTES_BYTES = 16 * 1024;
const MAX_NAME = 200;

/** What a caller inside notify may add to an upsert (the public API passes none of these). */
export interface UpsertOptions {
  consent?: { source: string | null; ip: string | null };
  /**
   * Status of a contact created now when the input gives none (default `subscribed`; an erased
   * address that had opted out comes back with that opt-out instead). It also replaces a status
   * listed in `lift` on an existing contact.
   */
  initialStatus?: 'subscribed' | 'pending' | 'transactional';
  /**
   * Statuses of an existing contact this write replaces by `initialStatus` when the input gives no
   * status. Default `transactional`: a contact notify.send() created is not anyone's subscriber yet,
   * so an upsert (API, import, capture) makes it what that upsert would have made of a new address.
   */
  lift?: readonly ContactStatus[];
  /** a double opt-in link that was emailed: stored with the contact, replacing any earlier one */
  confirmation?: IssuedLink;
}

export interface ContactListQuery {
  /** subscribed to this list */
  list?: string;
  status?: ContactStatus;
  /** part of the email or name, any case; `%`, `_` and `\` are plain characters */
  search?: string;
  segment?: Segment | string;
  /** the `next` of the previous page */
  after?: string | null;
  /** default 50, at most 1000 */
  limit?: number;
}

export interface ContactPage {
  contacts: Contact[];
  /** pass as `after` for the next page; null on the last one */
  next: string | null;
}

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

const LIFTED_BY_DEFAULT: readonly ContactStatus[] = ['transactional'];

const PAGE_DEFAULT = 50;
const PAGE_MAX = 1000;
const MAX_SEARCH = 200;

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
      return store.contacts.upsert(toWrite(email, input, options, remembered, now), now);
    },
    async upsertMany(items) {
      const now = clock.now();
      const checked = items.map(({ input, options }) => ({ email: checkContactInput(input), input, options: options ?? {} }));
      const hashes = checked.filter((c) => !c.input.status).map((c) => hashToken(emailKey(c.email)));
      const tombs = await store.contacts.tombstonesForEmails(hashes);
      const remembered = (email: string) => {
        const status = tombs.get(hashToken(emailKey(email)));
        return status && isSuppressedStatus(status) ? (status as ContactStatus) : undefined;
      };
      await store.contacts.upsertMany(
        checked.map((c) => toWrite(c.email, c.input, c.options, c.input.status ? undefined : remembered(c.email), now)),
        now,
      );
    },
    async getMany(emails) {
      return store.contacts.getManyByEmailKey(emails.filter((e) => isValidEmail(e.trim())).map((e) => emailKey(e)));
    },
    leftLists: (ids) => store.lists.leftBy(ids),
    rememberedStatus,
    get,
    async list(query = {}) {
      const limit = query.limit ?? PAGE_DEFAULT;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > PAGE_MAX) throw new NotifyError('INVALID_INPUT', `limit must be a whole number from 1 to ${PAGE_MAX}`, { field: 'limit' });
      const filter = await contactFilter(ctx, query);
      const afterId = query.after == null ? 0 : decodeCursor(query.after);
      // one row more than asked tells whether there is a next page
      const rows = await store.contacts.page(filter, afterId, limit + 1);
      const contacts = rows.slice(0, limit);
      return { contacts, next: rows.length > limit ? encodeCursor(contacts[contacts.length - 1].id) : null };
    },
    async count(query = {}) {
      return store.contacts.count(await contactFilter(ctx, { list: query.list, segment: query.segment }));
    },
    async subscribe(idOrEmail, listName) {
      const contact = await required(idOrEmail);
      const list = await requireList(ctx, listName);
      const now = clock.now();
      // Joining a list is the first opt-in of an address that only had one-off mail; the status
      // changes first so the join counts as a subscriber's (triggered sequences, events).
      if (contact.status === 'transactional') await store.contacts.changeStatus(contact.id, 'subscribed', now);
      await store.lists.setMembership(list.id, contact.id, 'subscribed', now);
      return (await store.contacts.getById(contact.id))!;
    },
    async unsubscribe(idOrEmail, listName) {
      const contact = await required(idOrEmail);
      if (listName === undefined || listName === null) {
        return (await suppressIfChanged(ctx, contact, 'unsubscribed', { source: 'api' })).contact;
      }
      const list = await requireList(ctx, listName);
      // a member leaving is an unsubscribe as the preference centre's (event row, app event); a non-member is only kept off the list
      const { changed } = await leaveList(ctx, contact, list, { source: 'api', sendId: null, campaignId: null });
      if (!changed) await store.lists.setMembership(list.id, contact.id, 'unsubscribed', clock.now());
      return (await store.contacts.getById(contact.id))!;
    },
    async erase(idOrEmail) {
      const contact = await get(idOrEmail);
      if (!contact) return false;
      return store.contacts.erase(contact.id, hashToken(emailKey(contact.email)), clock.now());
    },
  };
}

function toWrite(email: string, input: ContactInput, options: UpsertOptions, remembered: ContactStatus | undefined, now: number): ContactWrite {
  return {
    email,
    email_key: emailKey(email),
    name: input.name,
    attributes: input.attributes,
    status: input.status,
    initialStatus: remembered ?? options.initialStatus ?? 'subscribed',
    lift: options.lift ?? LIFTED_BY_DEFAULT,
    unsubscribe_token: newToken(),
    lists: input.lists,
    consent: options.consent ? { at: now, ...options.consent } : undefined,
    confirmation: options.confirmation,
  };
}

/** Validates a list/count query and checks that what it names exists. */
async function contactFilter(ctx: Pick<Context, 'store'>, query: ContactListQuery): Promise<ContactFilter> {
  if (typeof query !== 'object' || query === null) throw new NotifyError('INVALID_INPUT', 'The query must be an object');
  const filter: ContactFilter = {};
  if (query.list != null) filter.list = (await requireList(ctx, query.list)).name;
  if (query.status != null) {
    if (!(CONTACT_STATUSES as readonly string[]).includes(query.status)) throw new NotifyError('INVALID_INPUT', `status must be one of ${CONTACT_STATUSES.join(', ')}`, { field: 'status' });
    filter.status = query.status;
  }
  if (query.search != null && query.search !== '') {
    if (typeof query.search !== 'string' || query.search.length > MAX_SEARCH || query.search.includes('\u0000')) throw new NotifyError('INVALID_INPUT', `search must be text of at most ${MAX_SEARCH} characters, without NUL`, { field: 'search' });
    filter.search = query.search.toLowerCase();
  }
  if (query.segment != null) {
    filter.segment = parseSegment(query.segment);
    await requireReferences(ctx, filter.segment);
  }
  return filter;
}

/** Cursors are opaque to callers: they only hand back what `next` gave them. */
function encodeCursor(id: number): string {
  return Buffer.from(`c:${id}`).toString('base64url');
}

function decodeCursor(cursor: unknown): number {
  const m = typeof cursor === 'string' && cursor.length <= 40 ? /^c:([0-9]{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString()) : null;
  if (!m) throw new NotifyError('INVALID_INPUT', 'after must be the `next` cursor of a previous page', { field: 'after' });
  return Number(m[1]);
}

/** What upsert() refuses (INVALID_EMAIL, INVALID_INPUT), checked without writing; the trimmed address. */
export function checkContactInput(input: ContactInput): string {
  const email = normalizeEmail(input?.email);
  validateInput(input);
  return email;
}

function validateInput(input: ContactInput): void {
  if (input.name != null && (typeof input.name !== 'string' || input.name.length > MAX_NAME || /[\r\n]/.test(input.name))) {
    throw new NotifyError('INVALID_INPUT', `Contact name must be a single line of at most ${MAX_NAME} characters`, { field: 'name' });
  }
  if (input.status !== undefined && !(CONTACT_STATUSES as readonly string[]).includes(input.status)) {
    throw new NotifyError('INVALID_INPUT', `Contact status must be one of ${CONTACT_STATUSES.join(', ')}`, { field: 'status' });
  }
  if (input.lists !== undefined && (!Array.isArray(input.lists) || input.lists.some((l) => typeof l !== 'string' || l.length === 0 || l.length > 100))) {
    throw new NotifyError('INVALID_INPUT', 'Contact lists must be names of 1 to 100 characters', { field: 'lists' });
  }
  if (input.attributes !== undefined) {
    if (typeof input.attributes !== 'object' || input.attributes === null || Array.isArray(input.attributes)) {
      throw new NotifyError('INVALID_INPUT', 'Contact attributes must be an object', { field: 'attributes' });
    }
    if (JSON.stringify(input.attributes).length > MAX_ATTRIBUTES_BYTES) {
      throw new NotifyError('INVALID_INPUT', `Contact attributes must be under ${MAX_ATTRIBUTES_BYTES} bytes of JSON`, { field: 'attributes' });
    }
  }
}
