import type { Kysely } from 'kysely';
import type { SendGroup, SendGroupStarts } from '../../core/storage/campaigns.ts';
import { COUNTER_NAMES as NAMES } from '../../core/storage/counters.ts';
import type { StoreDialect } from '../dialect.ts';
import { deferredOutbox, type Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { createCountersRepo } from './counters.ts';
import { outcomesAnnounced } from './group-outcomes.ts';
import { suppressOutOfSegment } from './send-group-segment.ts';
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
    // a segment is compiled per campaign, so its check cannot join the dialect's fixed statements
    if (outcomesAnnounced(outbox) || (group.segment && start.length > 0)) return inTransaction(db, dialect, outbox, campaignId, group, now);
    return dialect.writeSendGroup(db, campaignId, group, now);
  };
}

/**
 * The same writes through the repositories in one Kysely transaction: events included (published
 * after the commit), and the segment's check before the list check and the start (both only take
 * rows still `queued`, so a send the segment check suppressed is not started).
 */
async function inTransaction(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox, campaignId: number, group: SendGroup, now: number): Promise<SendGroupStarts> {
  const held = deferredOutbox(outbox);
  const starts = await db.transaction().execute(async (trx) => {
    const outOfSegment = group.segment ? await suppressOutOfSegment(trx, dialect, campaignId, group.start, group.segment, now) : [];
    const starts = group.start.length === 0 ? NONE : await dialect.startSends(trx, campaignId, group.start, now);
    const started = starts.started;
    const suppressed = [...outOfSegment, ...starts.suppressed];
    if (group.outcomes.length > 0) await createSendsRepo(trx, dialect, held.outbox).finish(group.outcomes, now);
    await createCountersRepo(trx).add(new Map([[campaignId, { ...group.counts, suppressed: (group.counts.suppressed ?? 0) + suppressed.length }]]));
    return { started, suppressed };
  });
  held.committed();
  return starts;
}
