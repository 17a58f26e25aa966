/**
 * The events an outgoing webhook may carry (option webhooksOut's `events`), by their names on the
 * wire. Each is also an application event of the same name, but for `notify:enrollment.failed`,
 * which the interface spec names `notify_enrollment_failed` in-process (see core/events.ts).
 */
export const OUTBOUND_EVENT_TYPES = [
  'notify:contact.subscribed',
  'notify:contact.unsubscribed',
  'notify:contact.bounced',
  'notify:contact.complained',
  'notify:contact.confirmed',
  'notify:email.sent',
  'notify:email.failed',
  'notify:email.opened',
  'notify:email.clicked',
  'notify:campaign.sent',
  'notify:enrollment.failed',
] as const;
export type OutboundEventType = (typeof OUTBOUND_EVENT_TYPES)[number];

/** An event as its cause's transaction produced it. */
export interface OutboundEvent {
  type: OutboundEventType;
  /** what an outgoing webhook carries: plain JSON */
  data: Record<string, unknown>;
  /** what in-process listeners receive when it is not `data` (the whole Contact or Enrollment, with its dates) */
  local?: unknown;
}

/** The outbox as a transaction's cause writes to it (StoreTx.outbox). */
export interface EventOutbox {
  /**
   * Writes these events' rows (one per webhooksOut endpoint that takes each) in the transaction,
   * and publishes them to in-process listeners once it has committed: a rolled-back cause leaves
   * neither a row nor an application event.
   */
  add(events: OutboundEvent[], now: number): Promise<void>;
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

/** A tracking batch's row for one endpoint, waiting for the worker to expand it into deliveries. */
export interface WaitingBatch {
  endpoint: string;
  /** the event types the endpoint takes of it */
  types: string[];
  /** stored opens and clicks it will become deliveries of (two concurrent batches' ranges may share some) */
  events: number;
  /** when the worker expands it: at once, or once its clicks' labels are final */
  due: Date;
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
  /** counts by status; `batch` counts tracking batch rows (see waitingTracking), not events */
  counts(): Promise<Record<string, number>>;
  /** the oldest `limit` tracking batches not yet turned into deliveries, with the number of opens and clicks each stands for */
  waitingTracking(limit: number): Promise<WaitingBatch[]>;
  /**
   * Turns up to `limit` tracking batches due by `now` (one row per batch and endpoint, written with
   * the batch, due once its click labels are final) into the deliveries of their opens and clicks,
   * each batch in one transaction with its row's deletion; returns how many batches. Concurrent
   * workers take different batches.
   */
  expandTracking(limit: number, now: number): Promise<number>;
  /** deletes up to `limit` delivered or dead rows settled before `before`; returns how many */
  prune(before: number, limit: number): Promise<number>;
  /** the earliest time something becomes due (a batch to expand is due at once), or undefined when nothing waits */
  nextDueAt(staleAfterMs: number): Promise<number | undefined>;
}
