import type { ClaimedSettlement, StepStart } from '../../core/storage/enrollments.ts';
import type { FixedRun, StoreDialect } from '../dialect.ts';
import { fixedStatement } from '../fixed-statement.ts';
import { idsOf } from '../group-sql.ts';
import type { GroupWrites } from '../group-writes.ts';
import { outcomeStatements } from './send-groups.ts';

/**
 * Drip steps handed to the mailer: compare-and-set from `queued`, only while the step's enrollment
 * is still `processing` under the claim of the run starting it (a run whose claim was taken back,
 * or whose contact was suppressed meanwhile, starts nothing). The ids are ONE parameter.
 */
const STEP_START_SQLITE =
  "update notify_sends set status = 'sending', attempts = attempts + 1, updated_at = ? where id in (select value from json_each(?)) and +status = 'queued' and exists (select 1 from notify_enrollments e where e.id = notify_sends.enrollment_id and e.status = 'processing' and e.claim_token = ?) returning id";
const STEP_START = fixedStatement(STEP_START_SQLITE);

/** one start statement per claim token (a run's groups have one) */
const stepStartStatements = (start: StepStart[], now: number): FixedRun[] =>
  [...byClaim(start)].map(([token, ids]) => ({ text: STEP_START_SQLITE, parameters: [now, JSON.stringify(ids), token] }));

function byClaim(start: StepStart[]): Map<string, number[]> {
  return new Map([...grouped(start, (s) => s.claim_token)].map(([token, list]) => [token, list.map((s) => s.id)]));
}

/**
 * The settlements that move their enrollments to the same state under the same claim (a group's
 * delivered steps mostly do: sent at the same moment, on to the same next step) in one statement,
 * their ids ONE parameter, instead of one statement run per enrollment (a crossing into C, a bind
 * and a RETURNING row each). `+status` keeps the planner on the primary key, not the
 * (status, next_send_at) index.
 */
const SETTLE_SAME_SQLITE =
  "update notify_enrollments set status = ?, step_index = ?, next_send_at = ?, attempts = ?, last_error = ?, claim_token = null, locked_at = null, updated_at = ? where id in (select value from json_each(?)) and +status = 'processing' and claim_token = ? returning id";

/** no field but the last holds a space, and the last tells null from any text: distinct states never share a key */
const stateKey = (s: ClaimedSettlement) => `${s.claim_token} ${s.status} ${s.step_index} ${s.next_send_at} ${s.attempts} ${s.last_error === null ? '-' : `:${s.last_error}`}`;

const settleStatements = (settlements: ClaimedSettlement[], now: number): FixedRun[] =>
  [...grouped(settlements, stateKey).values()].map((same) => {
    const s = same[0];
    return { text: SETTLE_SAME_SQLITE, parameters: [s.status, s.step_index, s.next_send_at, s.attempts, s.last_error, now, JSON.stringify(same.map((x) => x.id)), s.claim_token] };
  });

/** items by key, in order */
function grouped<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** a drip group commit as fixed statements in one write transaction, as a campaign's (send-groups.ts) */
export function stepGroups(writeFixed: StoreDialect['writeFixed']): Pick<GroupWrites, 'writeStepGroup' | 'startSteps'> {
  return {
    async writeStepGroup(db, { start, outcomes, settlements }, now) {
      const starts = stepStartStatements(start, now);
      const statements: FixedRun[] = [...starts, ...outcomeStatements(outcomes, now)];
      statements.push(...settleStatements(settlements, now));
      const results = await writeFixed(db, statements);
      return { started: idsOf(results.slice(0, starts.length)), settled: idsOf(results.slice(starts.length)) };
    },
    async startSteps(db, start, now) {
      const rows: unknown[][] = [];
      for (const [token, ids] of byClaim(start)) rows.push((await STEP_START(db, [now, JSON.stringify(ids), token])).rows);
      return idsOf(rows);
    },
  };
}
