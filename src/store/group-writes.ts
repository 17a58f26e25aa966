import type { Kysely } from 'kysely';
import type { SendGroup, SendGroupStarts } from '../core/storage/campaigns.ts';
import type { StepGroup, StepGroupResult, StepStart } from '../core/storage/enrollments.ts';
import type { EventLabeler, TrackedEvent, TrackingBatchResult } from '../core/storage/tracking-batches.ts';
import type { JsonRowColumn } from './dialect.ts';
import type { Outbox } from './outbox.ts';
import type { Database } from './schema.ts';
import type { SegmentPredicate } from './segment-predicate.ts';

/** inserts a tracking batch's event rows in the transaction `trx` holds (GroupWrites.eventInserter) */
export type EventInsert = (trx: Kysely<Database>, rows: Record<string, unknown>[], outbox: Outbox, at: number) => Promise<void>;

/** a batch of opens for GroupWrites.writeOpens */
export interface OpensBatch {
  events: TrackedEvent[];
  label: EventLabeler;
  /** the batch row's id and time (none without an id) */
  batch?: { id: string; at: number };
  /** the events' own latest time: the outbox row's */
  now: number;
}

/**
 * The group commits of the send loops and of the tracking writer, which each engine writes its own
 * way because they run once per group on the hot path: on PostgreSQL a group is ONE statement (its
 * data-modifying WITH parts run in order, one round trip, its own transaction); on SQLite fixed
 * statements run synchronously in one write transaction (StoreDialect.writeFixed). What the group
 * means, the events' path and the empty group stay in store/repos/ (send-groups.ts,
 * step-groups.ts, tracking-inserts.ts); SQL both engines share is in group-sql.ts.
 * Implementations: send-groups.ts, step-groups.ts and event-inserts.ts in store/sqlite/ and store/postgres/.
 */
export interface GroupWrites {
  /**
   * CampaignsRepo.writeSendGroup without the outcomes' events, as one write transaction: sends
   * whose contact left since the claim become `suppressed` (and counted), the others `sending`
   * (compare-and-set from `queued`, only while the campaign is `sending`), the outcomes go on
   * their rows while those are `sending`, then the counters are added. With `segment` (the
   * campaign's, compiled once per run), a contact who no longer matches it has left too.
   */
  writeSendGroup(db: Kysely<Database>, campaignId: number, group: SendGroup, now: number, segment?: SegmentPredicate): Promise<SendGroupStarts>;
  /** the suppression and the start of writeSendGroup alone (counters not moved), in the transaction `trx` holds; `start` is not empty */
  startSends(trx: Kysely<Database>, campaignId: number, start: number[], now: number, segment?: SegmentPredicate): Promise<SendGroupStarts>;
  /**
   * EnrollmentsRepo.writeStepGroup without the outcomes' events, as one write transaction: the
   * starts (as startSteps), then the outcomes, then the settlements, each only under its claim.
   */
  writeStepGroup(db: Kysely<Database>, group: Required<StepGroup>, now: number): Promise<StepGroupResult>;
  /** EnrollmentsRepo.startSteps on `db` (a transaction's, inside Store.transaction); `start` is not empty */
  startSteps(db: Kysely<Database>, start: StepStart[], now: number): Promise<Set<number>>;
  /**
   * The insert of a tracking batch's rows into notify_events in `by` order (stable: rows with the
   * same value keep theirs), and the outbox rows naming them for the endpoints that take opens or
   * clicks. Built once per store. On SQLite the rows are sorted here and inserted one prepared run
   * per row (insertRows) between Outbox.trackingStart and Outbox.writeTracking; on PostgreSQL one
   * prepared statement, the rows one array per column (rowSource), sorted by the server (no
   * comparator calls on the pixel server's thread), through Outbox.insertTracked when an endpoint
   * wants them (no open without its outgoing event, no read of the largest event id).
   */
  eventInserter(columns: readonly JsonRowColumn[], by: string): EventInsert;
  /**
   * A tracking batch of opens alone (nobody in this process listening for them) written in one
   * statement, where the engine can (PostgreSQL: postgres/tracking-opens.ts); absent, the batch
   * takes the general path. An open's label never depends on its send, so it needs no read first.
   */
  writeOpens?(db: Kysely<Database>, outbox: Outbox, batch: OpensBatch): Promise<TrackingBatchResult>;
}
