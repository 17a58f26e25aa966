import { type Expression, type ExpressionBuilder, type SqlBool, sql } from 'kysely';
import type { SegmentNode } from '../core/segments.ts';
import type { StoreDialect } from './dialect.ts';
import type { Database } from './schema.ts';

/** A query over `notify_contacts as c`. */
export type ContactsScope = ExpressionBuilder<Database & { c: Database['notify_contacts'] }, 'c'>;

/**
 * The SQL condition of a validated segment over `notify_contacts as c`. Every value, attribute name
 * and list name is a bound parameter; only the shape of the filter becomes SQL text. Each piece is
 * true or false, never NULL, so `not` of a filter about a missing attribute is true.
 */
export function segmentCondition(eb: ContactsScope, dialect: StoreDialect, n: SegmentNode): Expression<SqlBool> {
  switch (n.kind) {
    case 'all':
      return eb.and(n.of.map((f) => segmentCondition(eb, dialect, f)));
    case 'any':
      return eb.or(n.of.map((f) => segmentCondition(eb, dialect, f)));
    case 'not':
      return eb.not(segmentCondition(eb, dialect, n.of));
    case 'attr':
      return attrCondition(dialect, n);
    case 'list':
      return eb('c.id', 'in', subscribersOf(eb, dialect, n.name));
    case 'opened':
    case 'clicked': {
      const column = n.kind === 'opened' ? (n.humanOnly ? 's.human_opened_at' : 's.opened_at') : n.humanOnly ? 's.human_clicked_at' : 's.clicked_at';
      return eb.exists(
        eb.selectFrom('notify_sends as s').select('s.id').where('s.campaign_id', '=', n.campaignId).whereRef('s.contact_id', '=', 'c.id').where(column, 'is not', null),
      );
    }
    case 'created':
      return eb('c.created_at', n.op === 'after' ? '>' : '<', n.at);
  }
}

const never = (cond: Expression<SqlBool>) => sql<SqlBool>`coalesce(${cond}, false)`;

function attrCondition(dialect: StoreDialect, n: Extract<SegmentNode, { kind: 'attr' }>): Expression<SqlBool> {
  const column = sql.ref('c.attributes');
  const json = dialect.jsonMember;
  switch (n.op) {
    case 'eq':
      return never(json.equals(column, n.name, n.value));
    case 'ne':
      return sql<SqlBool>`not ${never(json.equals(column, n.name, n.value))}`;
    case 'in':
      return never(sql<SqlBool>`(${sql.join(n.value.map((v) => json.equals(column, n.name, v)), sql` or `)})`);
    case 'contains':
      return never(json.contains(column, n.name, n.value));
    case 'gt':
    case 'lt':
      return never(json.compare(column, n.name, n.op === 'gt' ? '>' : '<', n.value));
    case 'exists':
      return n.value ? never(json.exists(column, n.name)) : sql<SqlBool>`not ${never(json.exists(column, n.name))}`;
  }
}

/** ids of the contacts subscribed to the list of that name (any case) */
export function subscribersOf(eb: ContactsScope, dialect: StoreDialect, name: string) {
  return eb
    .selectFrom('notify_list_members as m')
    .select('m.contact_id')
    .where('m.status', '=', 'subscribed')
    .where('m.list_id', '=', (q) => q.selectFrom('notify_lists as l').select('l.id').where(dialect.lower(sql.ref('l.name')), '=', name.toLowerCase()).orderBy('l.id').limit(1));
}
