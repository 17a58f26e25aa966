import type { Expression, Kysely, Selectable, SqlBool } from 'kysely';
import { parseSegment, type Segment } from '../../core/segments.ts';
import type { AudienceOf, CampaignsRepo } from '../../core/storage/campaigns.ts';
import { type Campaign, type CampaignStatus, NOT_OPTED_IN_STATUSES } from '../../core/types.ts';
import type { StoreDialect } from '../dialect.ts';
import { layoutColumn, layoutOf, parseJson, toDate } from '../rows.ts';
import type { CampaignsTable, Database } from '../schema.ts';
import { type ContactsScope, segmentCondition, subscribersOf } from '../segments.ts';

type Row = Selectable<CampaignsTable> & { list_name: string | null };

function toCampaign(row: Row): Campaign {
  return {
    id: Number(row.id),
    name: row.name,
    subject: row.subject,
    html: row.html,
    markdown: row.markdown,
    markdown_file: row.markdown_file,
    text: row.text,
    layout: layoutOf(row.layout),
    list: row.list_name,
    from_name: row.from_name,
    from_email: row.from_email,
    data: parseJson(row.data),
    headers: parseJson(row.headers) as Record<string, string>,
    segment: row.segment === null ? null : (parseJson(row.segment) as Segment),
    status: row.status as CampaignStatus,
    created_at: toDate(row.created_at)!,
    sent_at: toDate(row.sent_at),
  };
}

export function createCampaignsRepo(db: Kysely<Database>, dialect: StoreDialect): CampaignsRepo {
  const byId = (id: number) =>
    db
      .selectFrom('notify_campaigns')
      .leftJoin('notify_lists', 'notify_lists.id', 'notify_campaigns.list_id')
      .selectAll('notify_campaigns')
      .select('notify_lists.name as list_name')
      .where('notify_campaigns.id', '=', id)
      .executeTakeFirst();

  const audience = (c: AudienceOf) => {
    // validated at create; parsed again so a stored filter never reaches SQL unchecked
    const segment = c.segment === null ? undefined : parseSegment(c.segment);
    return db
      .selectFrom('notify_contacts as c')
      .where('c.status', 'not in', NOT_OPTED_IN_STATUSES)
      .where((eb) => {
        const scope = eb as unknown as ContactsScope;
        const parts: Expression<SqlBool>[] = [scope.not(scope.exists(scope.selectFrom('notify_sends as s').select('s.id').where('s.campaign_id', '=', c.id).whereRef('s.contact_id', '=', 'c.id')))];
        if (c.list !== null) parts.push(scope('c.id', 'in', subscribersOf(scope, dialect, c.list)));
        if (segment) parts.push(segmentCondition(scope, dialect, segment));
        return scope.and(parts);
      });
  };

  return {
    async create(input, now) {
      const { data, headers, layout, segment, ...rest } = input;
      const row = await db
        .insertInto('notify_campaigns')
        .values({
          ...rest,
          layout: layoutColumn(layout),
          data: JSON.stringify(data),
          headers: JSON.stringify(headers),
          segment: segment === null ? null : JSON.stringify(segment),
          status: 'draft',
          created_at: now,
          sent_at: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return toCampaign((await byId(Number(row.id)))!);
    },
    async getById(id) {
      const row = await byId(id);
      return row && toCampaign(row);
    },
    async setStatus(id, status, now) {
      await db
        .updateTable('notify_campaigns')
        .set({ status, ...(status === 'sent' ? { sent_at: now } : {}) })
        .where('id', '=', id)
        .execute();
    },
    async unsent(c, afterId, limit) {
      const rows = await audience(c)
        .select(['c.id', 'c.email', 'c.name', 'c.status', 'c.unsubscribe_token', 'c.attributes'])
        .where('c.id', '>', afterId)
        .orderBy('c.id')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ ...r, id: Number(r.id), attributes: parseJson(r.attributes) }));
    },
    async idsWithStatus(status) {
      const rows = await db.selectFrom('notify_campaigns').select('id').where('status', '=', status).orderBy('id').execute();
      return rows.map((r) => Number(r.id));
    },
    async countUnsent(c) {
      const row = await audience(c).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
      return Number(row?.n ?? 0);
    },
  };
}
