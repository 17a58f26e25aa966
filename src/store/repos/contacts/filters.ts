import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { ContactFilter, ContactsRepo } from '../../../core/storage/contacts.ts';
import type { StoreDialect } from '../../dialect.ts';
import type { Database } from '../../schema.ts';
import { type ContactsScope, segmentCondition, subscribersOf } from '../../segments.ts';
import { findListNamed } from '../contact-writes.ts';
import { contactsOf } from './rows.ts';

/** the contacts a filter (list, status, search, segment) selects: a page of them, or their count */
export function contactFilters(db: Kysely<Database>, dialect: StoreDialect): Pick<ContactsRepo, 'page' | 'count'> {
  /** every part of the filter but the list, over `c` */
  const conditions = (scope: ContactsScope, f: ContactFilter) => {
    const parts: Expression<SqlBool>[] = [];
    if (f.status !== undefined) parts.push(scope('c.status', '=', f.status));
    if (f.search) {
      parts.push(scope.or([scope(dialect.position(sql.ref('c.email_key'), f.search), '>', 0), scope(dialect.position(dialect.lower(sql.ref('c.name')), f.search), '>', 0)]));
    }
    if (f.segment) parts.push(segmentCondition(scope, dialect, f.segment));
    return scope.and(parts);
  };
  const filtered = (f: ContactFilter) =>
    db.selectFrom('notify_contacts as c').where((eb) => {
      const scope = eb as unknown as ContactsScope;
      return f.list === undefined ? conditions(scope, f) : scope.and([scope('c.id', 'in', subscribersOf(scope, dialect, f.list)), conditions(scope, f)]);
    });
  /** the id of the list of that name in any case (the exact spelling first), null when there is none */
  const listIdNamed = async (name: string) => {
    const row = await findListNamed(db, dialect, name);
    return row ? Number(row.id) : null;
  };
  /**
   * A page of a list's subscribers walks the membership index (list_id, status, contact_id) from
   * the cursor, joining each member's contact: a page costs the same at the end of a 100,000-member
   * list as at its start.
   */
  const listPage = (f: ContactFilter, listId: number, afterId: number, limit: number) =>
    db
      .selectFrom('notify_list_members as m')
      .innerJoin('notify_contacts as c', 'c.id', 'm.contact_id')
      .selectAll('c')
      // the id itself, not a subquery: the planner then knows the list and walks its part of the index
      .where('m.list_id', '=', listId)
      .where('m.status', '=', 'subscribed')
      .where('m.contact_id', '>', afterId)
      .where((eb) => conditions(eb as unknown as ContactsScope, f))
      .orderBy('m.contact_id')
      .limit(limit);

  return {
    async page(f, afterId, limit) {
      const listId = f.list === undefined ? undefined : await listIdNamed(f.list);
      if (listId === null) return [];
      const rows = await (listId === undefined ? filtered(f).selectAll('c').where('c.id', '>', afterId).orderBy('c.id').limit(limit) : listPage(f, listId, afterId, limit)).execute();
      return contactsOf(db, rows);
    },
    async count(f) {
      const row = await filtered(f).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
      return Number(row?.n ?? 0);
    },
  };
}
