import type { CounterValues } from './counters.ts';

export interface CampaignRow {
  id: number;
  name: string | null;
  subject: string;
  status: string;
  created_at: number;
  sent_at: number | null;
}

export type CampaignWithCounters = CampaignRow & { counters: CounterValues };

export interface LinkClickRow {
  index: number;
  url: string | null;
  clicks: number;
  unique: number;
  human: number;
}

export interface BucketRow {
  /** bucket start, epoch ms (aligned to a multiple of the bucket size) */
  start: number;
  type: 'open' | 'click';
  machine: boolean;
  events: number;
}

export interface ReasonRow {
  type: string;
  reason: string;
  events: number;
}

export interface SequenceRow {
  id: number;
  name: string;
  steps: number;
  enrollments: Record<string, number>;
}

/**
 * Read-only queries behind stats, the CLI and the admin pages. getCampaign is the hot path
 * (getCampaignStats): one primary-key lookup on the counters, never a scan of the send rows.
 */
export interface StatsRepo {
  /** the campaign with its counters (zeros before the first write); undefined when no such campaign */
  getCampaign(campaignId: number): Promise<CampaignWithCounters | undefined>;
  /** newest first */
  listCampaigns(limit: number, offset?: number, status?: string): Promise<CampaignWithCounters[]>;
  /** clicks per link position, with the URL from the campaign's link scope `c<id>` */
  linkClicks(campaignId: number): Promise<LinkClickRow[]>;
  /** first and last open/click time, epoch ms */
  engagementRange(campaignId: number): Promise<{ first: number; last: number } | undefined>;
  /** open and click events per time bucket in [from, to), split by the machine label */
  timeline(campaignId: number, from: number, to: number, bucketMs: number): Promise<BucketRow[]>;
  /** machine-labelled open and click events by reason */
  machineReasons(campaignId: number): Promise<ReasonRow[]>;
  /** each sequence with its step count and enrollments by status */
  sequences(): Promise<SequenceRow[]>;
}
