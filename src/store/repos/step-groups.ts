import type { Kysely } from 'kysely';
import type { ClaimedSettlement, StepGroup, StepGroupResult, StepStart } from '../../core/storage/enrollments.ts';
import type { FixedRun, StoreDialect } from '../dialect.ts';
import { fixedStatement } from '../fixed-statement.ts';
import { deferredOutbox, type Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { FINISH_POSTGRES, outcomeStatements, outcomesAnnounced } from './group-outcomes.ts';
import { outcomeRow } from './send-rows.ts';
import { createSendsRepo } from './sends.ts';


/** one enrollment's settlement, while this run's claim still holds it */
const SETTLE_ONE =
  "update notify_enrollments set status = ?, step_index = ?, next_send_at = ?, attempts = ?, last_error = ?, claim_token = null, locked_at = null, updated_at = ? where id = ? and status = 'processing' and claim_token = ? returning id";
const SETTLE = fixedStatement(SETTLE_ONE);

/**
 * SQLite: the settlements that move their enrollments to the same state under the same claim (a
 * group's delivered steps mostly do: sent at the same moment, on to the same next step) in one
 * statement, their ids ONE parameter, instead of one statement run per enrollment (a crossing into
 * C, a bind and a RETURNING row each). `+status` keeps the planner on the primary key, not the
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

/**
 * Drip steps handed to the mailer: compare-and-set from `queued`, only while the step's enrollment
 * is still `processing` under the claim of the run starting it (a run whose claim was taken back,
 * or whose contact was suppressed meanwhile, starts nothing). The ids are ONE parameter. On
 * PostgreSQL the enrollment is held, so a suppression either comes first and the step does not
 * start, or waits for the start's commit.
 */
const STEP_START_SQLITE =
  "update notify_sends set status = 'sending', attempts = attempts + 1, updated_at = ? where id in (select value from json_each(?)) and +status = 'queued' and exists (select 1 from notify_enrollments e where e.id = notify_sends.enrollment_id and e.status = 'processing' and e.claim_token = ?) returning id";
const STEP_START_POSTGRES = `update notify_sends as s set status = 'sending', attempts = s.attempts + 1, updated_at = ?
  from jsonb_to_recordset(?::jsonb) as x(id bigint, claim_token text)
  where s.id = x.id and s.status = 'queued' and exists (select 1 from notify_enrollments e where e.id = s.enrollment_id and e.status = 'processing' and e.claim_token = x.claim_token for update)
  returning s.id`;
const STEP_START = { sqlite: fixedStatement(STEP_START_SQLITE), postgres: fixedStatement(STEP_START_POSTGRES) };

/** SQLite: one start statement per claim token (a run's groups have one) */
const stepStartStatements = (start: StepStart[], now: number): FixedRun[] =>
  [...byClaim(start)].map(([token, ids]) => ({ text: STEP_START_SQLITE, parameters: [now, JSON.stringify(ids), token] }));

function byClaim(start: StepStart[]): Map<string, number[]> {
  return new Map([...grouped(start, (s) => s.claim_token)].map(([token, list]) => [token, list.map((s) => s.id)]));
}

/**
 * PostgreSQL: a drip group in ONE statement: the starts, then the outcomes, then the settlements,
 * each under its own claim token (each part reads the one before it, which makes them run in that
 * order). `kind` tells started send ids from settled enrollment ids.
 */
const STEP_GROUP_POSTGRES = `with started as (${STEP_START_POSTGRES}),
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
select 's' as kind, id from started union all select 'e' as kind, id from settled`;

const settleParameters = (s: ClaimedSettlement, now: number) => [s.status, s.step_index, s.next_send_at, s.attempts, s.last_error, now, s.id, s.claim_token];
const idsOf = (rows: unknown[][]) => new Set(rows.flatMap((r) => (r as { id: number }[]).map((x) => Number(x.id))));

/**
 * EnrollmentsRepo.writeStepGroup: a drip run's group commit written as a campaign's is (fixed
 * statements, one transaction; one statement on PostgreSQL); with `notify:email.sent` or
 * `notify:email.failed` wanted, the outcomes go through sends.finish, which writes those events.
 */
export function createStepGroupWriter(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox) {
  return async ({ start = [], outcomes, settlements }: StepGroup, now: number): Promise<StepGroupResult> => {
    if (start.length === 0 && outcomes.length === 0 && settlements.length === 0) return { started: new Set(), settled: new Set() };
    if (outcomesAnnounced(outbox)) return stepsWithEvents(db, dialect, outbox, { start, outcomes, settlements }, now);
    if (dialect.kind === 'postgres') {
      const rows = outcomes.map((o) => outcomeRow(o, now));
      const [out] = await dialect.writeFixed(db, [{ text: STEP_GROUP_POSTGRES, parameters: [now, JSON.stringify(start), JSON.stringify(rows), now, JSON.stringify(settlements)] }]);
      const marked = (out ?? []) as { kind: string; id: number }[];
      return { started: new Set(marked.filter((r) => r.kind === 's').map((r) => Number(r.id))), settled: new Set(marked.filter((r) => r.kind === 'e').map((r) => Number(r.id))) };
    }
    const starts = stepStartStatements(start, now);
    const statements: FixedRun[] = [...starts, ...outcomeStatements(outcomes, now)];
    statements.push(...settleStatements(settlements, now));
    const results = await dialect.writeFixed(db, statements);
    return { started: idsOf(results.slice(0, starts.length)), settled: idsOf(results.slice(starts.length)) };
  };
}

/** EnrollmentsRepo.startSteps: the starts alone, on `db` (a transaction's, inside Store.transaction) */
export function createStepStarter(db: Kysely<Database>, dialect: StoreDialect) {
  return async (start: StepStart[], now: number): Promise<Set<number>> => {
    if (start.length === 0) return new Set();
    if (dialect.kind === 'postgres') return idsOf([(await STEP_START.postgres(db, [now, JSON.stringify(start)])).rows]);
    const rows: unknown[][] = [];
    for (const [token, ids] of byClaim(start)) rows.push((await STEP_START.sqlite(db, [now, JSON.stringify(ids), token])).rows);
    return idsOf(rows);
  };
}

/** the same writes in one Kysely transaction, the outcomes' events included (published after the commit) */
async function stepsWithEvents(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox, group: Required<StepGroup>, now: number): Promise<StepGroupResult> {
  const held = deferredOutbox(outbox);
  const written = await db.transaction().execute(async (trx) => {
    const started = await createStepStarter(trx, dialect)(group.start, now);
    if (group.outcomes.length > 0) await createSendsRepo(trx, dialect, held.outbox).finish(group.outcomes, now);
    const rows: unknown[][] = [];
    for (const s of group.settlements) rows.push((await SETTLE(trx, settleParameters(s, now))).rows);
    return { started, settled: idsOf(rows) };
  });
  held.committed();
  return written;
}
