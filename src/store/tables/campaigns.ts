import type { Generated } from 'kysely';

// Campaigns and what sending them leaves: send rows, link positions, per-campaign counters.

/** The message columns campaigns and steps share. */
export interface ContentColumns {
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
  /** the counters `sent` and `bounced + complained` at the last resume; auto-pause judges what came after (migration 021) */
  auto_pause_sent_base: Generated<number | null>;
  auto_pause_bad_base: Generated<number | null>;
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

export interface LinksTable {
  id: Generated<number>;
  /** c<campaignId> | s<stepId> | m<sendId>, see core/link-refs.ts */
  scope: string;
  position: number;
  url: string;
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
