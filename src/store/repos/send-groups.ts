import type { Kysely } from 'kysely';
import type { SendGroup, SendGroupStarts } from '../../core/storage/campaigns.ts';
import { COUNTER_NAMES as NAMES } from '../../core/storage/counters.ts';
import type { FixedRun, StoreDialect } from '../dialect.ts';
import { fixedStatement } from '../fixed-statement.ts';
import { deferredOutbox, type Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { ADD_COUNTS, ADD_ON_CONFLICT, createCountersRepo } from './counters.ts';
import { suppressOutOfSegment } from './send-group-segment.ts';
import { outcomeRow } from './send-rows.ts';
import { FINISH_POSTGRES, outcomeStatements, outcomesAnnounced } from './group-outcomes.ts';
import { createSendsRepo } from './sends.ts';

/**
 * Sends handed to the mailer: compare-and-set from `queued`, only while the campaign is `sending`
 * (held, on PostgreSQL, so a pause waits for the sends it lets start; a share lock, as a claim's
 * hold is, so a group commit and the run's claim of its next chunk do not wait for each other). The ids are ONE parameter,
 * so one text serves any number of slots starting together. On SQLite `+status` keeps the planner
 * on the primary key: the status index would visit every queued row of every campaign.
 */
const START_SQLITE =
  "update notify_sends set status = 'sending', attempts = attempts + 1, updated_at = ? where id in (select value from json_each(?)) and +status = 'queued' and exists (select 1 from notify_campaigns where id = ? and status = 'sending') returning id, attempts";
const startPostgres = (except = '') =>
  `update notify_sends set status = 'sending', attempts = attempts + 1, updated_at = ? where id = any(?::bigint[]) and status = 'queued'${except} and exists (select 1 from notify_campaigns where id = ? and status = 'sending' for share) returning id, attempts`;
const START_POSTGRES = startPostgres();

/**
 * The send's contact still wants the campaign `k`: subscribed, and still a subscribed member of its
 * list when it has one (a one-click under unsubscribeScope 'list' leaves only that list). A run
 * claims a chunk ahead of handing it over, and throttled that is up to a minute: who left since is
 * not sent it. Both lookups are primary keys.
 */
const stillWanted = (send: string) =>
  `exists (select 1 from notify_contacts ct where ct.id = ${send}.contact_id and ct.status = 'subscribed' and (k.list_id is null or exists (select 1 from notify_list_members m where m.list_id = k.list_id and m.contact_id = ct.id and m.status = 'subscribed')))`;

/**
 * Sends about to start whose contact left meanwhile become `suppressed` (final, as the claim makes
 * a suppressed member's row; a retry's time and last error cleared, as suppressWaiting clears
 * them) instead of `sending`: the same guards as the start, the same one parameter of ids, run
 * just before it in the same write.
 */
const SUPPRESS_SQLITE = `update notify_sends set status = 'suppressed', error = null, next_attempt_at = null, updated_at = ? where id in (select value from json_each(?)) and +status = 'queued' and exists (select 1 from notify_campaigns k where k.id = ? and k.status = 'sending' and not ${stillWanted('notify_sends')}) returning id`;
const SUPPRESS_POSTGRES = `update notify_sends as s set status = 'suppressed', error = null, next_attempt_at = null, updated_at = ? where s.id = any(?::bigint[]) and s.status = 'queued' and exists (select 1 from notify_campaigns k where k.id = ? and k.status = 'sending' and not ${stillWanted('s')} for share) returning s.id`;

/**
 * SQLite: the suppressed counter of the campaign moved by the rows SUPPRESS_SQLITE just changed
 * (changes() is the count of the last statement that finished, the one before this in the same
 * write), so the count commits with the rows without a trip back to JavaScript.
 */
const COUNT_SUPPRESSED_SQLITE = `insert into notify_campaign_counters (campaign_id, ${NAMES.join(', ')}) select ?${NAMES.map((n) => (n === 'suppressed' ? ', changes()' : ', 0')).join('')} where changes() > 0 ${ADD_ON_CONFLICT}`;

/** the suppression and the start alone, inside a Kysely transaction */
const START = { sqlite: fixedStatement(START_SQLITE), postgres: fixedStatement(START_POSTGRES) };
const SUPPRESS = { sqlite: fixedStatement(SUPPRESS_SQLITE), postgres: fixedStatement(SUPPRESS_POSTGRES) };

/**
 * PostgreSQL: the whole group in ONE statement (one round trip, its own transaction) instead of
 * BEGIN, four statements and COMMIT. Each later part reads the one before it, which makes them
 * run in that order: the campaign row and the suppressed and started rows are locked first, then
 * the finished rows, then the counters row, as the statements one by one did. An empty part
 * changes nothing (no ids, no outcome rows, counters only when the last parameter says so or a
 * send was suppressed). The start skips the rows the suppression took: both read the same snapshot.
 */
const GROUP_POSTGRES = `with suppressed as (${SUPPRESS_POSTGRES}),
started as (${startPostgres(' and id <> all(select id from suppressed)')}),
finished as (
  ${FINISH_POSTGRES} and (select count(*) from started) >= 0
  returning s.id
),
counted as (
  insert into notify_campaign_counters (campaign_id, ${NAMES.join(', ')})
  select ?::bigint${NAMES.map((n) => (n === 'suppressed' ? ', ?::bigint + (select count(*) from suppressed)' : ', ?::bigint')).join('')}
  where (?::boolean or exists (select 1 from suppressed)) and (select count(*) from finished) >= 0
  ${ADD_ON_CONFLICT}
)
select 's' as kind, id, attempts from started union all select 'x' as kind, id, 0 from suppressed`;

type Started = { id: number; attempts: number };

const startedRows = (rows: unknown[] | undefined) => ((rows ?? []) as Started[]).map((r) => ({ id: Number(r.id), attempts: Number(r.attempts) }));
const ids = (rows: unknown[] | undefined) => ((rows ?? []) as { id: number }[]).map((r) => Number(r.id));
const NONE: SendGroupStarts = { started: [], suppressed: [] };

/**
 * CampaignsRepo.writeSendGroup: the send loop's group commit as fixed statements in one
 * transaction (StoreDialect.writeFixed); with `notify:email.sent` or `notify:email.failed` wanted
 * by an endpoint, the outcomes go through sends.finish, which writes those events with them.
 */
export function createSendGroupWriter(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox) {
  return async (campaignId: number, group: SendGroup, now: number): Promise<SendGroupStarts> => {
    const { start, outcomes, counts } = group;
    const counted = NAMES.some((n) => counts[n]);
    if (start.length === 0 && outcomes.length === 0 && !counted) return NONE;
    // a segment is compiled per campaign, so its check cannot join the fixed statements below
    if (outcomesAnnounced(outbox) || (group.segment && start.length > 0)) return inTransaction(db, dialect, outbox, campaignId, group, now);
    const values = NAMES.map((n) => counts[n] ?? 0);
    if (dialect.kind === 'postgres') {
      const [rows] = await dialect.writeFixed(db, [{ text: GROUP_POSTGRES, parameters: [now, start, campaignId, now, start, campaignId, JSON.stringify(outcomes.map((o) => outcomeRow(o, now))), campaignId, ...values, counted] }]);
      const marked = (rows ?? []) as { kind: string }[];
      return { started: startedRows(marked.filter((r) => r.kind === 's')), suppressed: ids(marked.filter((r) => r.kind === 'x')) };
    }
    const statements: FixedRun[] = [];
    if (start.length > 0) {
      const list = JSON.stringify(start);
      statements.push({ text: SUPPRESS_SQLITE, parameters: [now, list, campaignId] }, { text: COUNT_SUPPRESSED_SQLITE, parameters: [campaignId] }, { text: START_SQLITE, parameters: [now, list, campaignId] });
    }
    statements.push(...outcomeStatements(outcomes, now));
    if (counted) statements.push({ text: ADD_COUNTS, parameters: [campaignId, ...values] });
    const results = await dialect.writeFixed(db, statements);
    return start.length > 0 ? { started: startedRows(results[2]), suppressed: ids(results[0]) } : NONE;
  };
}

/**
 * The same writes through the repositories in one Kysely transaction: events included (published
 * after the commit), and the segment's check between the list check and the start.
 */
async function inTransaction(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox, campaignId: number, group: SendGroup, now: number): Promise<SendGroupStarts> {
  const held = deferredOutbox(outbox);
  const starts = await db.transaction().execute(async (trx) => {
    const list = dialect.kind === 'postgres' ? group.start : JSON.stringify(group.start);
    const parameters = [now, list, campaignId];
    const suppressed = group.start.length === 0 ? [] : ids((await SUPPRESS[dialect.kind](trx, parameters)).rows);
    if (group.segment) suppressed.push(...(await suppressOutOfSegment(trx, dialect, campaignId, group.start, group.segment, now)));
    const started = group.start.length === 0 ? [] : startedRows((await START[dialect.kind](trx, parameters)).rows);
    if (group.outcomes.length > 0) await createSendsRepo(trx, dialect, held.outbox).finish(group.outcomes, now);
    await createCountersRepo(trx).add(new Map([[campaignId, { ...group.counts, suppressed: (group.counts.suppressed ?? 0) + suppressed.length }]]));
    return { started, suppressed };
  });
  held.committed();
  return starts;
}
