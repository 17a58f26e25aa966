import type { Expression, Kysely, Selectable, SqlBool } from 'kysely';
import { parseSegment, type Segment } from '../../core/segments.ts';
import type { AudienceOf, CampaignChanges, CampaignsRepo } from '../../core/storage/campaigns.ts';
import { type Campaign, type CampaignStatus, NOT_OPTED_IN_STATUSES, SUPPRESSED_STATUSES } from '../../core/types.ts';
import type { StoreDialect } from '../dialect.ts';
import { atomically, type Outbox } from '../outbox.ts';
import { flagColumn, flagOf, layoutColumn, layoutOf, parseJson, toDate } from '../rows.ts';
import type { CampaignsTable, Database } from '../schema.ts';
import { createSendGroupWriter } from './send-groups.ts';
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
    send_at: toDate(row.send_at),
    status_reason: row.status_reason ?? null,
    track_opens: flagOf(row.track_opens),
    track_clicks: flagOf(row.track_clicks),
  };
}

export function createCampaignsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): CampaignsRepo {
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
      const { data, headers, layout, segment, track_opens, track_clicks, ...rest } = input;
      const row = await db
        .insertInto('notify_campaigns')
        .values({
          ...rest,
          layout: layoutColumn(layout),
          track_opens: flagColumn(track_opens),
          track_clicks: flagColumn(track_clicks),
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
    async countReachable(c) {
      const row = await audience(c)
        .where('c.status', 'not in', SUPPRESSED_STATUSES)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async statusOf(id) {
      const row = await db.selectFrom('notify_campaigns').select('status').where('id', '=', id).executeTakeFirst();
      return row?.status as CampaignStatus | undefined;
    },
    async transition(id, from, to, fields, now) {
      if (from.length === 0) return undefined;
      const announce = to === 'sent' && outbox.wants('notify:campaign.sent');
      const change = async (trx: Kysely<Database>) => {
        const res = await trx
          .updateTable('notify_campaigns')
          .set({ status: to, ...(to === 'sent' ? { sent_at: now } : {}), ...fields })
          .where('id', '=', id)
          .where('status', 'in', [...from])
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) !== 1) return undefined;
        if (!announce) return [];
        const row = await trx.selectFrom('notify_campaigns').select(['name', 'subject']).where('id', '=', id).executeTakeFirstOrThrow();
        const counts = await trx.selectFrom('notify_campaign_counters').selectAll().where('campaign_id', '=', id).executeTakeFirst();
        const event = {
          type: 'notify:campaign.sent' as const,
          data: { campaign: { id, name: row.name, subject: row.subject }, sent: Number(counts?.sent ?? 0), failed: Number(counts?.failed ?? 0), suppressed: Number(counts?.suppressed ?? 0) },
        };
        await outbox.write(trx, [event], now);
        return [event];
      };
      const events = announce ? await atomically(db, change) : await change(db);
      if (!events) return undefined;
      outbox.publish(events);
      return toCampaign((await byId(id))!);
    },
    async update(id, from, changes) {
      const res = await db.updateTable('notify_campaigns').set(changeColumns(changes)).where('id', '=', id).where('status', 'in', [...from]).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return undefined;
      return toCampaign((await byId(id))!);
    },
    async deleteDraft(id) {
      return db.transaction().execute(async (trx) => {
        const res = await trx.deleteFrom('notify_campaigns').where('id', '=', id).where('status', '=', 'draft').executeTakeFirst();
        if (Number(res.numDeletedRows) !== 1) return false;
        // a test send stored the draft's links under its scope
        await trx.deleteFrom('notify_links').where('scope', '=', `c${id}`).execute();
        // no foreign key does it on PostgreSQL (migration 016)
        await trx.deleteFrom('notify_events').where('campaign_id', '=', id).execute();
        return true;
      });
    },
    async list({ status, limit, after }) {
      let q = db
        .selectFrom('notify_campaigns')
        .leftJoin('notify_lists', 'notify_lists.id', 'notify_campaigns.list_id')
        .selectAll('notify_campaigns')
        .select('notify_lists.name as list_name');
      if (status) q = q.where('notify_campaigns.status', '=', status);
      if (after !== undefined) q = q.where('notify_campaigns.id', '>', after);
      const rows = await q.orderBy('notify_campaigns.id').limit(limit).execute();
      return rows.map(toCampaign);
    },
    async dueScheduled(now) {
      const rows = await db.selectFrom('notify_campaigns').select('id').where('status', '=', 'scheduled').where('send_at', '<=', now).orderBy('send_at').orderBy('id').execute();
      return rows.map((r) => Number(r.id));
    },
    async nextSendAt(after) {
      const row = await db
        .selectFrom('notify_campaigns')
        .select((eb) => eb.fn.min('send_at').as('t'))
        .where('status', '=', 'scheduled')
        .where('send_at', '>', after)
        .executeTakeFirst();
      return row?.t === null || row?.t === undefined ? undefined : Number(row.t);
    },
    async holdSending(id) {
      const res = await db
        .updateTable('notify_campaigns')
        .set((eb) => ({ status: eb.ref('status') }))
        .where('id', '=', id)
        .where('status', '=', 'sending')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    writeSendGroup: createSendGroupWriter(db, dialect, outbox),
    async countSending(id, since) {
      const row = await db
        .selectFrom('notify_sends')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', id)
        .where('status', '=', 'sending')
        .where('updated_at', '>=', since)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async releaseClaims(id, sendIds) {
      let released = 0;
      for (let i = 0; i < sendIds.length; i += 500) {
        const ids = sendIds.slice(i, i + 500);
        const res = await db.deleteFrom('notify_sends').where('campaign_id', '=', id).where('id', 'in', ids).where('status', '=', 'queued').where('attempts', '=', 0).executeTakeFirst();
        released += Number(res.numDeletedRows);
        // a retry keeps its row and its attempts: it waits as deferred, due at once
        await db.updateTable('notify_sends').set({ status: 'deferred' }).where('campaign_id', '=', id).where('id', 'in', ids).where('status', '=', 'queued').execute();
      }
      return released;
    },
  };
}

/** The columns of an update: JSON fields as text, the layout as its column form. */
function changeColumns(changes: CampaignChanges) {
  const { data, headers, layout, segment, track_opens, track_clicks, ...rest } = changes;
  return {
    ...rest,
    ...(track_opens !== undefined ? { track_opens: flagColumn(track_opens) } : {}),
    ...(track_clicks !== undefined ? { track_clicks: flagColumn(track_clicks) } : {}),
    ...(data !== undefined ? { data: JSON.stringify(data) } : {}),
    ...(headers !== undefined ? { headers: JSON.stringify(headers) } : {}),
    ...(layout !== undefined ? { layout: layoutColumn(layout) } : {}),
    ...(segment !== undefined ? { segment: segment === null ? null : JSON.stringify(segment) } : {}),
  };
}
