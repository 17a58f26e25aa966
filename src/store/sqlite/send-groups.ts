import type { SendOutcome } from '../../core/storage/sends.ts';
import { COUNTER_NAMES as NAMES } from '../../core/storage/counters.ts';
import type { FixedRun, StoreDialect } from '../dialect.ts';
import { fixedStatement } from '../fixed-statement.ts';
import { counterValues, ids, startedRows, stillWanted } from '../group-sql.ts';
import type { GroupWrites } from '../group-writes.ts';
import { ADD_COUNTS, ADD_ON_CONFLICT } from '../repos/counters.ts';
import { perPredicate } from '../segment-predicate.ts';
import { outcomeRow } from '../repos/send-rows.ts';

/**
 * Sends handed to the mailer: compare-and-set from `queued`, only while the campaign is `sending`.
 * The ids are ONE parameter, so one text serves any number of slots starting together. `+status`
 * keeps the planner on the primary key: the status index would visit every queued row of every
 * campaign.
 */
const START_SQLITE =
  "update notify_sends set status = 'sending', attempts = attempts + 1, updated_at = ? where id in (select value from json_each(?)) and +status = 'queued' and exists (select 1 from notify_campaigns where id = ? and status = 'sending') returning id, attempts";

/**
 * Sends about to start whose contact left meanwhile become `suppressed` (final, as the claim makes
 * a suppressed member's row; a retry's time and last error cleared, as suppressWaiting clears
 * them) instead of `sending`: the same guards as the start, the same one parameter of ids, run
 * just before it in the same write.
 */
const suppressSqlite = (segment = '') =>
  `update notify_sends set status = 'suppressed', error = null, next_attempt_at = null, updated_at = ? where id in (select value from json_each(?)) and +status = 'queued' and exists (select 1 from notify_campaigns k where k.id = ? and k.status = 'sending' and not ${stillWanted('notify_sends', segment)}) returning id`;
const SUPPRESS_SQLITE = suppressSqlite();
/** a segment campaign's: its segment's parameters follow the campaign id (made once per run) */
const segmentSuppress = perPredicate((p) => suppressSqlite(p.text));
const SEGMENT_SUPPRESS = perPredicate((p) => fixedStatement(segmentSuppress(p)));

/**
 * The suppressed counter of the campaign moved by the rows SUPPRESS_SQLITE just changed
 * (changes() is the count of the last statement that finished, the one before this in the same
 * write), so the count commits with the rows without a trip back to JavaScript.
 */
const COUNT_SUPPRESSED_SQLITE = `insert into notify_campaign_counters (campaign_id, ${NAMES.join(', ')}) select ?${NAMES.map((n) => (n === 'suppressed' ? ', changes()' : ', 0')).join('')} where changes() > 0 ${ADD_ON_CONFLICT}`;

/** the suppression and the start alone, inside a Kysely transaction */
const START = fixedStatement(START_SQLITE);
const SUPPRESS = fixedStatement(SUPPRESS_SQLITE);

/** one outcome on its row, while the row is still `sending` (a row reclaimed as interrupted keeps that) */
const OUTCOME_SQLITE = "update notify_sends set status = ?, error = ?, message_id = ?, sent_at = ?, next_attempt_at = ?, updated_at = ? where id = ? and status = 'sending'";

/** the outcome statements of a group, one per send */
export const outcomeStatements = (outcomes: SendOutcome[], now: number): FixedRun[] =>
  outcomes.map((o) => {
    const r = outcomeRow(o, now);
    return { text: OUTCOME_SQLITE, parameters: [r.status, r.error, r.message_id, r.sent_at, r.next_attempt_at, r.updated_at, r.id] };
  });

/** a campaign's group commit as fixed statements in one write transaction (StoreDialect.writeFixed) */
export function sendGroups(writeFixed: StoreDialect['writeFixed']): Pick<GroupWrites, 'writeSendGroup' | 'startSends'> {
  return {
    async writeSendGroup(db, campaignId, { start, outcomes, counts }, now, segment) {
      const { counted, values } = counterValues(counts);
      const statements: FixedRun[] = [];
      if (start.length > 0) {
        const list = JSON.stringify(start);
        const suppress = segment ? { text: segmentSuppress(segment), parameters: [now, list, campaignId, ...segment.parameters] } : { text: SUPPRESS_SQLITE, parameters: [now, list, campaignId] };
        statements.push(suppress, { text: COUNT_SUPPRESSED_SQLITE, parameters: [campaignId] }, { text: START_SQLITE, parameters: [now, list, campaignId] });
      }
      statements.push(...outcomeStatements(outcomes, now));
      if (counted) statements.push({ text: ADD_COUNTS, parameters: [campaignId, ...values] });
      const results = await writeFixed(db, statements);
      return start.length > 0 ? { started: startedRows(results[2]), suppressed: ids(results[0]) } : { started: [], suppressed: [] };
    },
    async startSends(trx, campaignId, start, now, segment) {
      const parameters = [now, JSON.stringify(start), campaignId];
      const suppressed = ids((await (segment ? SEGMENT_SUPPRESS(segment)(trx, [...parameters, ...segment.parameters]) : SUPPRESS(trx, parameters))).rows);
      const started = startedRows((await START(trx, parameters)).rows);
      return { started, suppressed };
    },
  };
}
