import type { StepStart } from '../../core/storage/enrollments.ts';
import type { FixedRun, StoreDialect } from '../dialect.ts';
import { fixedStatement } from '../fixed-statement.ts';
import { idsOf, SETTLE_ONE, settleParameters } from '../group-sql.ts';
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
  const out = new Map<string, number[]>();
  for (const s of start) out.set(s.claim_token, [...(out.get(s.claim_token) ?? []), s.id]);
  return out;
}

/** a drip group commit as fixed statements in one write transaction, as a campaign's (send-groups.ts) */
export function stepGroups(writeFixed: StoreDialect['writeFixed']): Pick<GroupWrites, 'writeStepGroup' | 'startSteps'> {
  return {
    async writeStepGroup(db, { start, outcomes, settlements }, now) {
      const starts = stepStartStatements(start, now);
      const statements: FixedRun[] = [...starts, ...outcomeStatements(outcomes, now)];
      for (const s of settlements) statements.push({ text: SETTLE_ONE, parameters: settleParameters(s, now) });
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
