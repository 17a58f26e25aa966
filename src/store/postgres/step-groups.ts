import type { StoreDialect } from '../dialect.ts';
import { fixedStatement, planEachRun } from '../fixed-statement.ts';
import { idsOf } from '../group-sql.ts';
import type { GroupWrites } from '../group-writes.ts';
import { functionOrInline } from './function-or-inline.ts';
import { FINISH_POSTGRES, finishParameters } from './send-groups.ts';

/**
 * Drip steps handed to the mailer, as on SQLite (sqlite/step-groups.ts), each under its own claim
 * token. The enrollment is held, so a suppression either comes first and the step does not start,
 * or waits for the start's commit.
 */
const STEP_START_POSTGRES = planEachRun(`update notify_sends as s set status = 'sending', attempts = s.attempts + 1, updated_at = ?
  from jsonb_to_recordset(?::jsonb) as x(id bigint, claim_token text)
  where s.id = x.id and s.status = 'queued' and exists (select 1 from notify_enrollments e where e.id = s.enrollment_id and e.status = 'processing' and e.claim_token = x.claim_token for update)
  returning s.id`);
const STEP_START = fixedStatement(STEP_START_POSTGRES);

/**
 * A drip group in ONE statement: the starts, then the outcomes, then the settlements, each under
 * its own claim token (each part reads the one before it, which makes them run in that order).
 * `kind` tells started send ids from settled enrollment ids. For a database not migrated to 023 yet.
 */
const STEP_GROUP_POSTGRES = planEachRun(`with started as (${STEP_START_POSTGRES}),
finished as (
  ${FINISH_POSTGRES} and (select count(*) from started) >= 0
  returning s.id
),
settled as (
  update notify_enrollments as e set status = x.status, step_index = x.step_index, next_send_at = x.next_send_at, attempts = x.attempts, last_error = x.last_error, claim_token = null, locked_at = null, updated_at = ?
  from jsonb_to_recordset(?::jsonb) as x(id bigint, claim_token text, status text, step_index integer, next_send_at bigint, attempts integer, last_error text)
  where e.id = x.id and e.status = 'processing' and e.claim_token = x.claim_token and (select count(*) from finished) >= 0
  returning e.id
)
select 's' as kind, id from started union all select 'e' as kind, id from settled`);

/**
 * The group as a call of notify_step_group (migration 023), whose plan each connection keeps: the
 * statement above was parsed and planned on every group, about half of the backend's CPU per group.
 */
const GROUP_POSTGRES = 'select kind, id from notify_step_group(?::bigint, ?::jsonb, ?::bigint[], ?::jsonb, ?::bigint[], ?::jsonb, ?::bigint[])';

/** a drip group commit as one statement, as a campaign's (send-groups.ts) */
export function stepGroups(writeFixed: StoreDialect['writeFixed']): Pick<GroupWrites, 'writeStepGroup' | 'startSteps'> {
  const write = functionOrInline(writeFixed);
  return {
    async writeStepGroup(db, { start, outcomes, settlements }, now) {
      const [finishJson, finishIds] = finishParameters(outcomes, now);
      const startJson = JSON.stringify(start);
      const settlementsJson = JSON.stringify(settlements);
      const out = await write(
        db,
        { text: GROUP_POSTGRES, parameters: [now, startJson, start.map((s) => s.id), finishJson, finishIds, settlementsJson, settlements.map((e) => e.id)] },
        () => ({ text: STEP_GROUP_POSTGRES, parameters: [now, startJson, finishJson, finishIds, now, settlementsJson] }),
      );
      const marked = (out ?? []) as { kind: string; id: number }[];
      return { started: new Set(marked.filter((r) => r.kind === 's').map((r) => Number(r.id))), settled: new Set(marked.filter((r) => r.kind === 'e').map((r) => Number(r.id))) };
    },
    startSteps: async (db, start, now) => idsOf([(await STEP_START(db, [now, JSON.stringify(start)])).rows]),
  };
}
