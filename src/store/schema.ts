import type { ContactsTable, ListMembersTable, ListsTable, StatusChangesTable, TombstonesTable } from './tables/audience.ts';
import type { CampaignCountersTable, CampaignsTable, LinksTable, SendsTable } from './tables/campaigns.ts';
import type { EnrollmentsTable, SequencesTable, StepsTable } from './tables/drips.ts';
import type { EventsTable, OutboundEventsTable, TrackingBatchesTable, WebhookReceiptsTable } from './tables/events.ts';
import type { MetaTable, RateLimitsTable, SendPacingTable, SendPacingTurnsTable } from './tables/service.ts';

export type { ContactsTable, ListMembersTable, ListsTable, StatusChangesTable, TombstonesTable } from './tables/audience.ts';
export type { CampaignCountersTable, CampaignsTable, LinksTable, SendsTable } from './tables/campaigns.ts';
export type { EnrollmentsTable, SequencesTable, StepsTable } from './tables/drips.ts';
export type { EventsTable, OutboundEventsTable, TrackingBatchesTable, WebhookReceiptsTable } from './tables/events.ts';
export type { MetaTable, RateLimitsTable, SendPacingTable, SendPacingTurnsTable } from './tables/service.ts';

/**
 * Table types for Kysely. Timestamps are epoch milliseconds (bigint on PostgreSQL, integer on
 * SQLite) so comparisons and bucketing are the same SQL on both engines; the public API turns
 * them into Date. JSON columns hold text on SQLite and jsonb on PostgreSQL; write JSON strings.
 */
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
