import type { Kysely } from 'kysely';
import type { StepGroup, StepGroupResult, StepStart } from '../../core/storage/enrollments.ts';
import type { StoreDialect } from '../dialect.ts';
import { fixedStatement } from '../fixed-statement.ts';
import { idsOf, SETTLE_ONE, settleParameters } from '../group-sql.ts';
import { deferredOutbox, type Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { outcomesAnnounced } from './group-outcomes.ts';
import { createSendsRepo } from './sends.ts';

const SETTLE = fixedStatement(SETTLE_ONE);

/**
 * EnrollmentsRepo.writeStepGroup: a drip run's group commit written as a campaign's is
 * (StoreDialect.writeStepGroup); with `notify:email.sent` or
 * `notify:email.failed` wanted, the outcomes go through sends.finish, which writes those events.
 */
export function createStepGroupWriter(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox) {
  return async ({ start = [], outcomes, settlements }: StepGroup, now: number): Promise<StepGroupResult> => {
    if (start.length === 0 && outcomes.length === 0 && settlements.length === 0) return { started: new Set(), settled: new Set() };
    if (outcomesAnnounced(outbox)) return stepsWithEvents(db, dialect, outbox, { start, outcomes, settlements }, now);
    return dialect.writeStepGroup(db, { start, outcomes, settlements }, now);
  };
}

/** EnrollmentsRepo.startSteps: the starts alone, on `db` (a transaction's, inside Store.transaction) */
export function createStepStarter(db: Kysely<Database>, dialect: StoreDialect) {
  return async (start: StepStart[], now: number): Promise<Set<number>> => {
    if (start.length === 0) return new Set();
    return dialect.startSteps(db, start, now);
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
