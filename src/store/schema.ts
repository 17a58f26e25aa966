import type { Generated } from 'kysely';

/**
 * Table types for Kysely. Timestamps are epoch milliseconds (bigint on PostgreSQL, integer on
 * SQLite) so comparisons and bucketing are the same SQL on both engines; the public API turns
 * them into Date. JSON columns hold text on SQLite and jsonb on PostgreSQL; write JSON strings.
 */
export interface ContactsTable {
  id: Generated<number>;
  email: string;
  /** email lower-cased in JS (full Unicode); the unique key for case-insensitive lookups */
  email_key: string;
  name: string | null;
  status: string;
  unsubscribe_token: string;
  attributes: string | Record<string, unknown>;
  consent_at: number | null;
  consent_source: string | null;
  consent_ip: string | null;
  confirm_token_hash: string | null;
  /** when the current double opt-in link was issued, so it expires */
  confirm_sent_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ListsTable {
  id: Generated<number>;
  /** unique whatever the case (checked on write: see repos/lists.ts) */
  name: string;
  description: Generated<string | null>;
  /** 1 when a public capture form may join it */
  public: Generated<number>;
  created_at: number;
}

export interface ListMembersTable {
  list_id: number;
  contact_id: number;
  /** when the contact joined */
  created_at: number;
  /** subscribed | unsubscribed (migration 008; earlier members are subscribed) */
  status: Generated<string>;
  unsubscribed_at: Generated<number | null>;
}

/** The message columns campaigns and steps share. */
interface ContentColumns {
  subject: string;
  html: string | null;
  markdown: string | null;
  markdown_file: string | null;
  text: string | null;
  layout: string | null;
}

export interface CampaignsTable extends ContentColumns {
  id: Generated<number>;
  name: string | null;
  list_id: number | null;
  from_name: string | null;
  from_email: string | null;
  /** draft | scheduled | sending | paused | cancelled | sent */
  status: string;
  created_at: number;
  sent_at: number | null;
  /** when a `scheduled` campaign starts (kept after it did) */
  send_at: Generated<number | null>;
  /** why notify itself paused it (auto-pause, an empty audience); null otherwise */
  status_reason: Generated<string | null>;
  /** Liquid variables for every recipient (JSON object) */
  data: Generated<string | Record<string, unknown>>;
  /** custom headers (JSON object of name -> value) */
  headers: Generated<string | Record<string, unknown>>;
  /** the segment filter as given (JSON), resolved again at each run; null = none */
  segment: Generated<string | Record<string, unknown> | null>;
  /** 1 or 0; null = the trackOpens option (migration 013) */
  track_opens: Generated<number | null>;
  /** 1 or 0; null = the trackClicks option (migration 013) */
  track_clicks: Generated<number | null>;
}

export interface SendsTable {
  id: Generated<number>;
  token: string;
  campaign_id: number | null;
  contact_id: number | null;
  enrollment_id: number | null;
  step_id: number | null;
  step_index: number | null;
  to_email: string;
  subject: string;
  /** queued | sending | deferred | sent | failed | suppressed */
  status: string;
  error: string | null;
  message_id: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
  opened_at: number | null;
  clicked_at: number | null;
  /** first open/click classified human (migration 004) */
  human_opened_at: number | null;
  human_clicked_at: number | null;
  /** notify.send(): JSON list of the suppressed recipients left out (migration 008); null when none */
  suppressed_recipients: string | unknown[] | null;
  /** times handed to the mailer (migration 010) */
  attempts: Generated<number>;
  /** a `deferred` send's next try (migration 010) */
  next_attempt_at: number | null;
}

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

export interface LinksTable {
  id: Generated<number>;
  /** c<campaignId> | s<stepId> | m<sendId>, see core/link-refs.ts */
  scope: string;
  position: number;
  url: string;
  created_at: number;
}

export interface SequencesTable {
  id: Generated<number>;
  name: string;
  /** the list whose joiners the sequence enrols by itself */
  trigger_list_id: number | null;
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

export interface StepsTable extends ContentColumns {
  id: Generated<number>;
  sequence_id: number;
  position: number;
  delay_minutes: number;
  created_at: number;
}

export interface EnrollmentsTable {
  id: Generated<number>;
  sequence_id: number;
  contact_id: number;
  /** active | processing | completed | failed | cancelled */
  status: string;
  step_index: number;
  next_send_at: number | null;
  attempts: number;
  locked_at: number | null;
  claim_token: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface TombstonesTable {
  token_hash: string;
  email_hash: string;
  status: string;
  created_at: number;
}

export interface CampaignCountersTable {
  campaign_id: number;
  total: number;
  sent: number;
  failed: number;
  suppressed: number;
  opened: number;
  clicked: number;
  human_opened: number;
  human_clicked: number;
  bounced: number;
  complained: number;
  unsubscribed: number;
}

export interface WebhookReceiptsTable {
  provider: string;
  message_id: string;
  created_at: number;
}

/** a contact's or a membership's status change, written by triggers (migration 012) */
export interface StatusChangesTable {
  id: Generated<number>;
  contact_id: number;
  /** null: the contact's own status; else the membership of that list */
  list_id: number | null;
  /** null: a membership that did not exist before */
  from_status: string | null;
  to_status: string;
  created_at: number;
}

/** fixed-window counters of the database rate-limit store (migration 007) */
export interface RateLimitsTable {
  bucket: string;
  hits: number;
  reset_at: number;
}

export interface SendPacingTable {
  key: string;
  /** epoch microseconds */
  next_us: number;
}

export interface SendPacingTurnsTable {
  key: string;
  turn: string;
  /** epoch ms */
  until: number;
}

/** ids of tracking batches already written: a retry after a lost reply writes nothing twice */
export interface TrackingBatchesTable {
  id: string;
  events: number;
  created_at: number;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface Database {
  notify_contacts: ContactsTable;
  notify_lists: ListsTable;
  notify_list_members: ListMembersTable;
  notify_campaigns: CampaignsTable;
  notify_sends: SendsTable;
  notify_events: EventsTable;
  notify_links: LinksTable;
  notify_sequences: SequencesTable;
  notify_steps: StepsTable;
  notify_enrollments: EnrollmentsTable;
  notify_tombstones: TombstonesTable;
  notify_campaign_counters: CampaignCountersTable;
  notify_webhook_receipts: WebhookReceiptsTable;
  notify_meta: MetaTable;
  notify_rate_limits: RateLimitsTable;
  notify_send_pacing: SendPacingTable;
  notify_send_pacing_turns: SendPacingTurnsTable;
  notify_status_changes: StatusChangesTable;
  notify_outbound_events: OutboundEventsTable;
  notify_tracking_batches: TrackingBatchesTable;
}
