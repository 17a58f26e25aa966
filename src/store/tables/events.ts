import type { Generated } from 'kysely';

// What happened after sending: tracking and webhook events, outgoing webhook deliveries, and the ids that make retries write nothing twice.

export interface EventsTable {
  id: Generated<number>;
  /** open | click | soft_bounce | bounce | complaint | unsubscribe */
  type: string;
  send_id: number | null;
  contact_id: number | null;
  campaign_id: number | null;
  link_index: number | null;
  metadata: string | Record<string, unknown>;
  /** 1 when classified as a machine (proxy, scanner), 0 for a human */
  is_machine: number;
  machine_reason: string | null;
  created_at: number;
}

export interface OutboundEventsTable {
  id: Generated<number>;
  /** the id receivers see; the same on every try and for every endpoint of one event */
  event_id: string;
  endpoint: string;
  type: string;
  /** the exact JSON delivered, fixed when the event is written */
  body: string;
  /** pending | delivering | delivered | dead */
  status: string;
  attempts: number;
  next_attempt_at: number;
  claim_token: string | null;
  locked_at: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookReceiptsTable {
  provider: string;
  message_id: string;
  created_at: number;
}

/** ids of tracking batches already written: a retry after a lost reply writes nothing twice */
export interface TrackingBatchesTable {
  id: string;
  events: number;
  created_at: number;
}
