import type { Kysely } from 'kysely';
import type { SendGroup, SendGroupStarts } from '../../core/storage/campaigns.ts';
import { COUNTER_NAMES as NAMES } from '../../core/storage/counters.ts';
import type { StoreDialect } from '../dialect.ts';
import { deferredOutbox, type Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { type SegmentPredicate, segmentPredicate } from '../segment-predicate.ts';
import { createCountersRepo } from './counters.ts';
import { outcomesAnnounced } from './group-outcomes.ts';
import { createSendsRepo } from './sends.ts';

const NONE: SendGroupStarts = { started: [], suppressed: [] };

/**
 * CampaignsRepo.writeSendGroup: the send loop's group commit, written as each engine writes it
 * fastest (StoreDialect.writeSendGroup); with `notify:email.sent` or `notify:email.failed` wanted
 * by an endpoint, the outcomes go through sends.finish, which writes those events with them.
 */
export function createSendGroupWriter(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox) {
  return async (campaignId: number, group: SendGroup, now: number): Promise<SendGroupStarts> => {
    const { start, outcomes, counts } = group;
    const counted = NAMES.some((n) => counts[n]);
    if (start.length === 0 && outcomes.length === 0 && !counted) return NONE;
    // a segment campaign's segment, compiled once per run into the same statements as a condition on the contact
    const segment = group.segment && start.length > 0 ? segmentPredicate(dialect, group.segment) : undefined;
    if (outcomesAnnounced(outbox)) return inTransaction(db, dialect, outbox, campaignId, group, now, segment);
    return dialect.writeSendGroup(db, campaignId, group, now, segment);
  };
}

/** The same writes through the repositories in one Kysely transaction: events included (published after the commit). */
async function inTransaction(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox, campaignId: number, group: SendGroup, now: number, segment?: SegmentPredicate): Promise<SendGroupStarts> {
  const held = deferredOutbox(outbox);
  const starts = await db.transaction().execute(async (trx) => {
    const starts = group.start.length === 0 ? NONE : await dialect.startSends(trx, campaignId, group.start, now, segment);
    if (group.outcomes.length > 0) await createSendsRepo(trx, dialect, held.outbox).finish(group.outcomes, now);
    await createCountersRepo(trx).add(new Map([[campaignId, { ...group.counts, suppressed: (group.counts.suppressed ?? 0) + starts.suppressed.length }]]));
    return starts;
  });
  held.committed();
  return starts;
}
