import { type Kysely, sql } from 'kysely';
import { FINISHED_IN_FUNCTION, keptPlanFunction } from './022_send_group_writes.ts';
import type { MigrationContext } from './index.ts';

/**
 * PostgreSQL only (SQLite plans each statement once per connection already): the drip run's group
 * commit as a function (notify_step_group), so its plan is kept per connection, as the campaign's
 * is (022). Planned on every run, parsing and planning the statement was about half of the
 * backend's CPU per drip group (dispatch-count --drips --backend-stats, loaded machine: parse 232 +
 * bind 407 of 1,197 us per group). Its plan is generic with sequential scans off, so the plan kept
 * reads sends and enrollments by primary key whatever the tables held when it was made; the ids
 * come as arrays beside the JSON rows for that (the JSON rows alone look like a hundred rows, and a
 * hash join over the whole table could win).
 */
export async function up(db: Kysely<any>, { kind }: MigrationContext): Promise<void> {
  if (kind !== 'postgres') return;
  await sql.raw(STEP_GROUP_FUNCTION).execute(db);
}

/**
 * One drip group commit (postgres/step-groups.ts): the steps about to start become `sending`, each
 * while its enrollment is still `processing` under the run's claim token (held, so a suppression
 * either comes first or waits for the commit); then the outcomes go on their rows while those are
 * `sending`; then the enrollments are settled under their claim tokens. Each part reads the one
 * before, so they run in that order. Returns the started sends ('s', id) and the settled
 * enrollments ('e', id).
 */
const STEP_GROUP_FUNCTION = keptPlanFunction(
  'notify_step_group(p_now bigint, p_start jsonb, p_start_ids bigint[], p_outcomes jsonb, p_finish bigint[], p_settlements jsonb, p_settle_ids bigint[])',
  'kind text, id bigint',
  `  with started as (
    update notify_sends as s set status = 'sending', attempts = s.attempts + 1, updated_at = p_now
    from jsonb_to_recordset(p_start) as x(id bigint, claim_token text)
    where s.id = any(p_start_ids) and s.id = x.id and s.status || '' = 'queued'
      and exists (select 1 from notify_enrollments e where e.id = s.enrollment_id and e.status = 'processing' and e.claim_token = x.claim_token for update)
    returning s.id
  ),
${FINISHED_IN_FUNCTION}
  settled as (
    update notify_enrollments as e set status = x.status, step_index = x.step_index, next_send_at = x.next_send_at, attempts = x.attempts, last_error = x.last_error, claim_token = null, locked_at = null, updated_at = p_now
    from jsonb_to_recordset(p_settlements) as x(id bigint, claim_token text, status text, step_index integer, next_send_at bigint, attempts integer, last_error text)
    where e.id = any(p_settle_ids) and e.id = x.id and e.status = 'processing' and e.claim_token = x.claim_token and (select count(*) from finished) >= 0
    returning e.id
  )
  select 's'::text, st.id from started st
  union all
  select 'e'::text, se.id from settled se`,
);
