import { COUNTER_NAMES as NAMES } from '../../core/storage/counters.ts';
import type { StoreDialect } from '../dialect.ts';
import { fixedStatement, planEachRun } from '../fixed-statement.ts';
import { counterValues, ids, startedRows, stillWanted } from '../group-sql.ts';
import type { GroupWrites } from '../group-writes.ts';
import { ADD_ON_CONFLICT } from '../repos/counters.ts';
import { outcomeRow } from '../repos/send-rows.ts';
import { perPredicate } from '../segment-predicate.ts';
import type { SendOutcome } from '../../core/storage/sends.ts';

/**
 * Sends handed to the mailer: compare-and-set from `queued`, only while the campaign is `sending`
 * (held, so a pause waits for the sends it lets start; a share lock, as a claim's hold is, so a
 * group commit and the run's claim of its next chunk do not wait for each other). The ids are ONE
 * parameter, so one text serves any number of slots starting together. `status || ''` keeps the
 * planner on the primary key: the status index holds an entry for every row version updated since
 * the last vacuum (two per send), so a run without one would read more per group the more it had
 * sent (see FINISH_POSTGRES).
 */
const startPostgres = (except = '') =>
  `update notify_sends set status = 'sending', attempts = attempts + 1, updated_at = ? where id = any(?::bigint[]) and status || '' = 'queued'${except} and exists (select 1 from notify_campaigns where id = ? and status = 'sending' for share) returning id, attempts`;
const START_POSTGRES = planEachRun(startPostgres());

/** Sends about to start whose contact left meanwhile become `suppressed` (as on SQLite: sqlite/send-groups.ts). */
const suppressPostgres = (segment = '') =>
  `update notify_sends as s set status = 'suppressed', error = null, next_attempt_at = null, updated_at = ? where s.id = any(?::bigint[]) and s.status || '' = 'queued' and exists (select 1 from notify_campaigns k where k.id = ? and k.status = 'sending' and not ${stillWanted('s', segment)} for share) returning s.id`;
const SUPPRESS_POSTGRES = planEachRun(suppressPostgres());

/** the suppression and the start alone, inside a Kysely transaction */
const START = fixedStatement(START_POSTGRES);
const SUPPRESS = fixedStatement(SUPPRESS_POSTGRES);

/**
 * every outcome of a group on its row (one JSON parameter, then the same ids as one array
 * parameter), while the row is still `sending`. The rows come by primary key only: the ids as an
 * array give the planner a key lookup it prefers at any table size (the JSON rows alone look like a
 * hundred rows, and a hash join over a scan won), and `|| ''` keeps the status test off the status
 * index, whose entries for rows updated since the last vacuum a bitmap scan of `sending` visited on
 * every group: that cost grew with every send the table had seen (0.5 -> 1.5 ms of backend CPU per
 * message over three 2,000-send runs, loaded machine).
 */
export const FINISH_POSTGRES = `update notify_sends as s set status = x.status, error = x.error, message_id = x.message_id, sent_at = x.sent_at, next_attempt_at = x.next_attempt_at, updated_at = x.updated_at
  from jsonb_to_recordset(?::jsonb) as x(id bigint, status text, error text, message_id text, sent_at bigint, next_attempt_at bigint, updated_at bigint)
  where s.id = any(?::bigint[]) and s.id = x.id and s.status || '' = 'sending'`;

/** the parameters of FINISH_POSTGRES for a group's outcomes */
export const finishParameters = (outcomes: SendOutcome[], now: number): [string, number[]] => [JSON.stringify(outcomes.map((o) => outcomeRow(o, now))), outcomes.map((o) => o.id)];

/**
 * The whole group in ONE statement (one round trip, its own transaction) instead of BEGIN, four
 * statements and COMMIT. Each later part reads the one before it, which makes them run in that
 * order: the campaign row and the suppressed and started rows are locked first, then the finished
 * rows, then the counters row, as the statements one by one did. An empty part changes nothing (no
 * ids, no outcome rows, counters only when the last parameter says so or a send was suppressed).
 * The start skips the rows the suppression took: both read the same snapshot.
 */
const groupPostgres = (segment = '') => `with suppressed as (${suppressPostgres(segment)}),
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
const GROUP_POSTGRES = planEachRun(groupPostgres());

/**
 * A segment campaign's suppression and group commit: its segment's parameters follow the
 * suppression's campaign id. Made once per run and never prepared (a text per segment would stay
 * on every connection); planned on every run, as the others are.
 */
const SEGMENT_SUPPRESS = perPredicate((p) => fixedStatement(suppressPostgres(p.text), false));
const SEGMENT_GROUP = perPredicate((p) => fixedStatement(groupPostgres(p.text), false));

/** a campaign's group commit as one statement (StoreDialect.writeFixed) */
export function sendGroups(writeFixed: StoreDialect['writeFixed']): Pick<GroupWrites, 'writeSendGroup' | 'startSends'> {
  return {
    async writeSendGroup(db, campaignId, { start, outcomes, counts }, now, segment) {
      const { counted, values } = counterValues(counts);
      const parameters = [now, start, campaignId, ...(segment?.parameters ?? []), now, start, campaignId, ...finishParameters(outcomes, now), campaignId, ...values, counted];
      const [rows] = segment ? [(await SEGMENT_GROUP(segment)(db, parameters)).rows] : await writeFixed(db, [{ text: GROUP_POSTGRES, parameters }]);
      const marked = (rows ?? []) as { kind: string }[];
      return { started: startedRows(marked.filter((r) => r.kind === 's')), suppressed: ids(marked.filter((r) => r.kind === 'x')) };
    },
    async startSends(trx, campaignId, start, now, segment) {
      const parameters = [now, start, campaignId];
      const suppressed = ids((await (segment ? SEGMENT_SUPPRESS(segment)(trx, [...parameters, ...segment.parameters]) : SUPPRESS(trx, parameters))).rows);
      const started = startedRows((await START(trx, parameters)).rows);
      return { started, suppressed };
    },
  };
}
