import type { StoreDialect } from '../dialect.ts';
import { fixedStatement, planEachRun } from '../fixed-statement.ts';
import { counterValues, ids, startedRows, stillWanted } from '../group-sql.ts';
import type { GroupWrites } from '../group-writes.ts';
import { outcomeRow } from '../repos/send-rows.ts';
import { perPredicate } from '../segment-predicate.ts';
import { functionOrInline } from './function-or-inline.ts';
import { inlineGroup } from './send-group-inline.ts';
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
 * statements and COMMIT: notify_send_group (migration 022) suppresses, starts, finishes and counts,
 * in that order. As a function its plan is kept per connection (no parse or plan per group: they
 * were over half of the backend's CPU per group), and it runs with sequential scans off, so the
 * generic plan PostgreSQL keeps reads sends by primary key however small the table was when it was
 * made. An empty part changes nothing (no ids, no outcome rows, counters only when the last
 * parameter says so or a send was suppressed).
 */
const GROUP_POSTGRES = 'select kind, id, attempts from notify_send_group(?::bigint, ?::bigint[], ?::bigint, ?::jsonb, ?::bigint[], ?::bigint[], ?::boolean)';

/** the start inside the inline group: it skips the rows the suppression took (both read the same snapshot) */
const START_AFTER_SUPPRESS = startPostgres(' and id <> all(select id from suppressed)');

/** the same group without the function, where migration 022 has not run yet */
const GROUP_INLINE = planEachRun(inlineGroup(SUPPRESS_POSTGRES, START_AFTER_SUPPRESS, FINISH_POSTGRES));

/**
 * A segment campaign's suppression and group commit: its segment's parameters follow the
 * suppression's campaign id. Its condition cannot go into notify_send_group, so the group is the
 * inline statement, made once per run and never prepared (a text per segment would stay on every
 * connection); planned on every run, as the inline form is.
 */
const SEGMENT_SUPPRESS = perPredicate((p) => fixedStatement(suppressPostgres(p.text), false));
const SEGMENT_GROUP = perPredicate((p) => fixedStatement(inlineGroup(suppressPostgres(p.text), START_AFTER_SUPPRESS, FINISH_POSTGRES), false));

/** the started and the suppressed sends of a group commit's rows */
function marks(rows: unknown[] | undefined) {
  const marked = (rows ?? []) as { kind: string }[];
  return { started: startedRows(marked.filter((r) => r.kind === 's')), suppressed: ids(marked.filter((r) => r.kind === 'x')) };
}

/** a campaign's group commit as one statement (StoreDialect.writeFixed) */
export function sendGroups(writeFixed: StoreDialect['writeFixed']): Pick<GroupWrites, 'writeSendGroup' | 'startSends'> {
  const write = functionOrInline(writeFixed);
  return {
    async writeSendGroup(db, campaignId, { start, outcomes, counts }, now, segment) {
      const { counted, values } = counterValues(counts);
      const finish = finishParameters(outcomes, now);
      /** the inline group's parameters: a segment's follow the suppression's campaign id */
      const inline = (segmentParameters: readonly unknown[] = []) => [now, start, campaignId, ...segmentParameters, now, start, campaignId, ...finish, campaignId, ...values, counted];
      if (segment) return marks((await SEGMENT_GROUP(segment)(db, inline(segment.parameters))).rows);
      return marks(await write(db, { text: GROUP_POSTGRES, parameters: [now, start, campaignId, ...finish, values, counted] }, () => ({ text: GROUP_INLINE, parameters: inline() })));
    },
    async startSends(trx, campaignId, start, now, segment) {
      const parameters = [now, start, campaignId];
      const suppressed = ids((await (segment ? SEGMENT_SUPPRESS(segment)(trx, [...parameters, ...segment.parameters]) : SUPPRESS(trx, parameters))).rows);
      const started = startedRows((await START(trx, parameters)).rows);
      return { started, suppressed };
    },
  };
}
