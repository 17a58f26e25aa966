import type { EngagementLabel } from '../engagement.ts';

/** An open or click as the HTTP layer saw it, before its token is resolved. */
export interface TrackedEvent {
  type: 'open' | 'click';
  token: string;
  /** epoch ms of the request */
  at: number;
  link_index: number | null;
  metadata: Record<string, unknown>;
  method: string;
  userAgent: string;
}

export interface SendRef {
  id: number;
  campaign_id: number | null;
  contact_id: number | null;
  sent_at: number | null;
}

export interface TrackingBatchResult {
  inserted: number;
  /** events whose token matched no send (dropped) */
  unknown: number;
  firstOpens: number;
  firstClicks: number;
  /**
   * the batch id was already stored: an earlier attempt committed (its reply was lost), nothing
   * was written now; `inserted` is what that attempt inserted
   */
  replayed?: true;
}

/** `burst`: the click belongs to a burst of several links of its send (see core/engagement.ts) */
export type EventLabeler = (event: TrackedEvent, send: SendRef, hints: { burst: boolean }) => EngagementLabel;

export interface TrackingRepo {
  /**
   * One write transaction for a batch (group commit): resolves the tokens in one query (the sends
   * locked against other writers), inserts every event, sets opened_at / clicked_at (and their
   * human_ twins) only where still null, and adds the per-campaign counter deltas of the first
   * ones. Concurrent writers in other processes cannot count a first open twice.
   * With a `batchId` the write happens once: the id is stored in the same transaction, and a
   * retry of a batch whose earlier attempt committed writes nothing and answers `replayed`.
   */
  applyBatch(events: TrackedEvent[], label: EventLabeler, batchId?: string): Promise<TrackingBatchResult>;
  /** forgets the batch ids stored before `before` (epoch ms); returns how many */
  pruneBatches(before: number): Promise<number>;
  sendByToken(token: string): Promise<SendRef | undefined>;
  /** the send with its token, for the short unsubscribe link that names the send by id */
  sendById(id: number): Promise<(SendRef & { token: string }) | undefined>;
}
