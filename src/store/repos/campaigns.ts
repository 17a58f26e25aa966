import type { Kysely, Selectable } from 'kysely';
import type { CampaignsRepo } from '../../core/storage/campaigns.ts';
import { type Campaign, type CampaignStatus, NOT_OPTED_IN_STATUSES } from '../../core/types.ts';
import { layoutColumn, layoutOf, parseJson, toDate } from '../rows.ts';
import type { CampaignsTable, Database } from '../schema.ts';

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
    status: row.status as CampaignStatus,
    created_at: toDate(row.created_at)!,
    sent_at: toDate(row.sent_at),
  };
}

export function createCampaignsRepo(db: Kysely<Database>): CampaignsRepo {
  const byId = (id: number) =>
    db
      .selectFrom('notify_campaigns')
      .leftJoin('notify_lists', 'notify_lists.id', 'notify_campaigns.list_id')
      .selectAll('notify_campaigns')
      .select('notify_lists.name as list_name')
      .where('notify_campaigns.id', '=', id)
      .executeTakeFirst();

  const audience = (c: Pick<Campaign, 'id' | 'list'>) => {
    let q = db.selectFrom('notify_contacts as c').where('c.status', 'not in', NOT_OPTED_IN_STATUSES);
    if (c.list !== null) {
      q = q
        .innerJoin('notify_list_members as m', 'm.contact_id', 'c.id')
        .innerJoin('notify_lists as l', 'l.id', 'm.list_id')
        .where('l.name', '=', c.list);
    }
    return q.where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('notify_sends as s').select('s.id').where('s.campaign_id', '=', c.id).whereRef('s.contact_id', '=', 'c.id'))),
    );
  };

  return {
    async create(input, now) {
      const id = await db.transaction().execute(async (trx) => {
        let listId: number | null = null;
        if (input.list !== null) {
          await trx.insertInto('notify_lists').values({ name: input.list, created_at: now }).onConflict((oc) => oc.column('name').doNothing()).execute();
          listId = Number((await trx.selectFrom('notify_lists').select('id').where('name', '=', input.list).executeTakeFirstOrThrow()).id);
        }
        const { list: _list, data, headers, layout, ...rest } = input;
        const row = await trx
          .insertInto('notify_campaigns')
          .values({ ...rest, layout: layoutColumn(layout), list_id: listId, data: JSON.stringify(data), headers: JSON.stringify(headers), status: 'draft', created_at: now, sent_at: null })
          .returning('id')
          .executeTakeFirstOrThrow();
        return Number(row.id);
      });
      return toCampaign((await byId(id))!);
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
