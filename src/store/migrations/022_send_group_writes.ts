import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * The counters notify_send_group adds, in the order of its counts parameter (COUNTER_NAMES when
 * this migration was written; a counter added later needs the function replaced by a migration of
 * its own: test/send/group-plans.test.ts compares the two lists).
 */
export const SEND_GROUP_COUNTERS = ['total', 'sent', 'failed', 'suppressed', 'opened', 'clicked', 'human_opened', 'human_clicked', 'bounced', 'complained', 'unsubscribed'] as const;

/**
 * PostgreSQL only (SQLite updates only the indexes whose columns changed, and plans each
 * statement once per connection already): what a campaign send costs the database.
 *
 * Fewer index entries per send. A send row is written three times (claimed `queued`, `sending`,
 * then its outcome); status changes each time, so no update is HOT and every row version got an
 * entry in every index. The indexes on status now hold only the rows their readers look for:
 * the campaign's waiting and in-flight rows (takeWaiting, waiting, countSending, cancelWaiting),
 * `sending` rows by age (failStale, interruptStaleSteps) and `deferred` rows by due time
 * (nextAttempt); message ids only once there is one (the webhooks' lookup). A send's three
 * versions made 24 index entries; now 19, and the indexes its run reads stay small.
 *
 * The send loop's group commit as a function (notify_send_group), so its plan is kept per
 * connection like any prepared statement's: parsing and planning it was over half of the backend's
 * CPU per group. It runs with sequential scans off, so the generic plan PostgreSQL keeps is by
 * primary key whatever the table held when it was made (store/fixed-statement.ts planEachRun says
 * how a plan made on a small table read every send row of a 100,000-send run).
 */
export async function up(db: Kysely<any>, { kind }: MigrationContext): Promise<void> {
  if (kind !== 'postgres') return;
  await db.schema.dropIndex('notify_sends_status_updated').execute();
  await db.schema.createIndex('notify_sends_sending').on('notify_sends').column('updated_at').where(sql.ref('status'), '=', 'sending').execute();
  await db.schema.createIndex('notify_sends_deferred').on('notify_sends').column('next_attempt_at').where(sql.ref('status'), '=', 'deferred').execute();
  await db.schema.dropIndex('notify_sends_campaign_status').execute();
  await sql`create index notify_sends_campaign_status on notify_sends (campaign_id, status) where status in ('queued', 'sending', 'deferred')`.execute(db);
  await db.schema.dropIndex('notify_sends_message_id').execute();
  await db.schema.createIndex('notify_sends_message_id').on('notify_sends').column('message_id').where(sql.ref('message_id'), 'is not', null).execute();
  await sql.raw(SEND_GROUP_FUNCTION).execute(db);
}

/** a contact still wants campaign k's send s: subscribed, and a subscribed member of its list when it has one */
const STILL_WANTED =
  "exists (select 1 from notify_contacts ct where ct.id = s.contact_id and ct.status = 'subscribed' and (k.list_id is null or exists (select 1 from notify_list_members m where m.list_id = k.list_id and m.contact_id = ct.id and m.status = 'subscribed')))";

/**
 * A PL/pgSQL function returning the rows of its one query `body`, whose generic plan each
 * connection keeps, made with sequential scans off (see up). Shared with migration 023: the text
 * made here must stay what it was when 022 first ran.
 */
export const keptPlanFunction = (signature: string, returns: string, body: string) => `create or replace function ${signature}
returns table (${returns})
language plpgsql
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
#variable_conflict use_column
begin
  return query
${body};
end
$$`;

/** the outcomes (p_outcomes, their ids p_finish) on their rows while those are `sending`, after the CTE `started` */
export const FINISHED_IN_FUNCTION = `  finished as (
    update notify_sends as s set status = x.status, error = x.error, message_id = x.message_id, sent_at = x.sent_at, next_attempt_at = x.next_attempt_at, updated_at = x.updated_at
    from jsonb_to_recordset(p_outcomes) as x(id bigint, status text, error text, message_id text, sent_at bigint, next_attempt_at bigint, updated_at bigint)
    where s.id = any(p_finish) and s.id = x.id and s.status || '' = 'sending' and (select count(*) from started) >= 0
    returning s.id
  ),`;

/**
 * One group commit of campaign p_campaign (postgres/send-groups.ts): sends about to start whose
 * contact left become `suppressed`, the others `sending` (both from `queued`, only while the
 * campaign is `sending`, which they hold), the outcomes go on their rows while those are
 * `sending`, then the counters (p_counts in SEND_GROUP_COUNTERS order, plus the suppressed)
 * when p_counted or a send was suppressed. Each part reads the one before, so they run in that
 * order. Returns the started ('s', id, attempts) and suppressed ('x', id, 0) sends.
 */
const SEND_GROUP_FUNCTION = keptPlanFunction(
  'notify_send_group(p_now bigint, p_start bigint[], p_campaign bigint, p_outcomes jsonb, p_finish bigint[], p_counts bigint[], p_counted boolean)',
  'kind text, id bigint, attempts integer',
  `  with suppressed as (
    update notify_sends as s set status = 'suppressed', error = null, next_attempt_at = null, updated_at = p_now
    where s.id = any(p_start) and s.status || '' = 'queued'
      and exists (select 1 from notify_campaigns k where k.id = p_campaign and k.status = 'sending' and not ${STILL_WANTED} for share)
    returning s.id
  ),
  started as (
    update notify_sends as s set status = 'sending', attempts = s.attempts + 1, updated_at = p_now
    where s.id = any(p_start) and s.status || '' = 'queued' and s.id <> all(select x.id from suppressed x)
      and exists (select 1 from notify_campaigns k where k.id = p_campaign and k.status = 'sending' for share)
    returning s.id, s.attempts
  ),
${FINISHED_IN_FUNCTION}
  counted as (
    insert into notify_campaign_counters as c (campaign_id, ${SEND_GROUP_COUNTERS.join(', ')})
    select p_campaign${SEND_GROUP_COUNTERS.map((n, i) => (n === 'suppressed' ? `, p_counts[${i + 1}] + (select count(*) from suppressed)` : `, p_counts[${i + 1}]`)).join('')}
    where (p_counted or exists (select 1 from suppressed)) and (select count(*) from finished) >= 0
    on conflict (campaign_id) do update set ${SEND_GROUP_COUNTERS.map((n) => `${n} = c.${n} + excluded.${n}`).join(', ')}
  )
  select 's'::text, st.id, st.attempts from started st
  union all
  select 'x'::text, su.id, 0 from suppressed su`,
);
