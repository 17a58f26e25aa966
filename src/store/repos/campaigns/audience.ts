import type { Expression, Kysely, SqlBool } from 'kysely';
import { parseSegment } from '../../../core/segments.ts';
import type { AudienceOf, CampaignsRepo } from '../../../core/storage/campaigns.ts';
import { NOT_OPTED_IN_STATUSES, SUPPRESSED_STATUSES } from '../../../core/types.ts';
import type { StoreDialect } from '../../dialect.ts';
import { parseJson } from '../../rows.ts';
import type { Database } from '../../schema.ts';
import { type ContactsScope, segmentCondition, subscribersOf } from '../../segments.ts';

/** who a campaign still has to reach: its list's subscribers (or everyone), narrowed by its segment, without a send row yet */
export function campaignAudience(db: Kysely<Database>, dialect: StoreDialect): Pick<CampaignsRepo, 'unsent' | 'countUnsent' | 'countReachable'> {
  /**
   * `afterId`, the run's cursor, is repeated inside both subqueries: PostgreSQL does not carry
   * `c.id > afterId` across to them, and its merge joins then read the campaign's send rows and the
   * list's members from the first contact on every chunk (the reads grow with what was sent).
   */
  const audience = (c: AudienceOf, afterId = 0) => {
    // validated at create; parsed again so a stored filter never reaches SQL unchecked
    const segment = c.segment === null ? undefined : parseSegment(c.segment);
    return db
      .selectFrom('notify_contacts as c')
      .where('c.status', 'not in', NOT_OPTED_IN_STATUSES)
      .where((eb) => {
        const scope = eb as unknown as ContactsScope;
        const parts: Expression<SqlBool>[] = [scope.not(scope.exists(scope.selectFrom('notify_sends as s').select('s.id').where('s.campaign_id', '=', c.id).where('s.contact_id', '>', afterId).whereRef('s.contact_id', '=', 'c.id')))];
        if (c.list !== null) parts.push(scope('c.id', 'in', subscribersOf(scope, dialect, c.list).where('m.contact_id', '>', afterId)));
        if (segment) parts.push(segmentCondition(scope, dialect, segment));
        return scope.and(parts);
      });
  };

  return {
    async unsent(c, afterId, limit) {
      const rows = await audience(c, afterId)
        .select(['c.id', 'c.email', 'c.name', 'c.status', 'c.unsubscribe_token', 'c.attributes'])
        .where('c.id', '>', afterId)
        .orderBy('c.id')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ ...r, id: Number(r.id), attributes: parseJson(r.attributes) }));
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
  };
}
