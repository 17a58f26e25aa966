/** The events an outgoing webhook may carry (option webhooksOut's `events`). */
export const OUTBOUND_EVENT_TYPES = [
  'notify:contact.subscribed',
  'notify:contact.confirmed',
  'notify:email.sent',
  'notify:email.failed',
  'notify:email.opened',
  'notify:email.clicked',
  'notify:campaign.sent',
] as const;
export type OutboundEventType = (typeof OUTBOUND_EVENT_TYPES)[number];

/** An event as its cause's transaction produced it; `data` is plain JSON. */
export interface OutboundEvent {
  type: OutboundEventType;
  data: Record<string, unknown>;
}

/**
 * Where events go, as the store needs to know it when it writes them: which endpoints take which
 * types (the outbox rows) and who in this process listens (the application events, published once
 * the transaction has committed).
 */
export interface EventSink {
  /** the endpoint URLs that take this type (webhooksOut) */
  endpointsFor(type: OutboundEventType): readonly string[];
  /** whether anything at all (an endpoint or an in-process listener) wants this type: otherwise it is not even built */
  wants(type: OutboundEventType): boolean;
  /** whether an in-process listener wants this type (the tracking writer builds opens and clicks only for them) */
  listens(type: OutboundEventType): boolean;
  /** events whose transaction committed */
  publish(events: OutboundEvent[]): void;
}

/** One delivery of one event to one endpoint, as a worker claimed it. */
export interface OutboundDelivery {
  id: number;
  event_id: string;
  endpoint: string;
  type: string;
  body: string;
  attempts: number;
  created_at: number;
}

export type DeliveryResult = { status: 'delivered' } | { status: 'pending'; nextAttemptAt: number; error: string } | { status: 'dead'; error: string };

export interface OutboundRow {
  id: number;
  event_id: string;
  endpoint: string;
  type: string;
  status: string;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

export interface OutboundRepo {
  /**
   * Takes up to `limit` due deliveries (pending with next_attempt_at <= now, or `delivering` locked
   * before `staleBefore`: a worker that died mid-delivery) for this claim; concurrent claims take
   * different rows (FOR UPDATE SKIP LOCKED on PostgreSQL, one writer at a time on SQLite).
   */
  claimDue(now: number, staleBefore: number, limit: number, claimToken: string): Promise<OutboundDelivery[]>;
  /** records a try's result; false when the claim was lost meanwhile (the row changes nothing then) */
  settle(id: number, claimToken: string, result: DeliveryResult, now: number): Promise<boolean>;
  /** newest first, for the admin page */
  recent(filter: { status?: string }, limit: number): Promise<OutboundRow[]>;
  counts(): Promise<Record<string, number>>;
  /**
   * Turns up to `limit` tracking batches (one row per batch and endpoint, written with the batch)
   * into the deliveries of their opens and clicks, each batch in one transaction with its row's
   * deletion; returns how many batches. Concurrent workers take different batches.
   */
  expandTracking(limit: number): Promise<number>;
  /** deletes up to `limit` delivered or dead rows settled before `before`; returns how many */
  prune(before: number, limit: number): Promise<number>;
  /** the earliest time something becomes due (a batch to expand is due at once), or undefined when nothing waits */
  nextDueAt(staleAfterMs: number): Promise<number | undefined>;
}
