import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { requireList } from './lists.ts';
import { requireReferences } from './segment-references.ts';
import { parseSegment, type Segment } from './segments.ts';
import type { ContactFilter } from './storage/contacts.ts';
import { CONTACT_STATUSES, type Contact, type ContactStatus } from './types.ts';

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

const PAGE_DEFAULT = 50;
const PAGE_MAX = 1000;
const MAX_SEARCH = 200;

/** A page of contacts in id order (keyset: each page costs the same however deep). */
export async function listContacts(ctx: Pick<Context, 'store'>, query: ContactListQuery): Promise<ContactPage> {
  checkQuery(query);
  const limit = query.limit ?? PAGE_DEFAULT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > PAGE_MAX) throw new NotifyError('INVALID_INPUT', `limit must be a whole number from 1 to ${PAGE_MAX}`, { field: 'limit' });
  const filter = await contactFilter(ctx, query);
  const afterId = query.after == null ? 0 : decodeCursor(query.after);
  // one row more than asked tells whether there is a next page
  const rows = await ctx.store.contacts.page(filter, afterId, limit + 1);
  const contacts = rows.slice(0, limit);
  return { contacts, next: rows.length > limit ? encodeCursor(contacts[contacts.length - 1].id) : null };
}

/** null, a list name or an array where the query object belongs: refused before any field is read */
function checkQuery(query: unknown): asserts query is ContactListQuery {
  if (typeof query !== 'object' || query === null || Array.isArray(query)) throw new NotifyError('INVALID_INPUT', 'The query must be an object such as { list: "news" }');
}

/** Validates a list/count query and checks that what it names exists. */
export async function contactFilter(ctx: Pick<Context, 'store'>, query: ContactListQuery): Promise<ContactFilter> {
  checkQuery(query);
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

