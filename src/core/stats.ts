import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import type { CampaignWithCounters, SequenceRow } from './storage/stats.ts';
import type { CampaignStats } from './types.ts';

/** Unique human engagement: sends with at least one open (click) that was not labelled a machine. */
export interface HumanFigures {
  opened: number;
  clicked: number;
}

export interface CampaignSummary {
  id: number;
  name: string | null;
  subject: string;
  status: string;
  created_at: Date;
  sent_at: Date | null;
  /** the spec's figures, raw: machine opens and clicks count, as the spec defines them */
  stats: CampaignStats;
  /** the same opened/clicked with machine-labelled events left out */
  human: HumanFigures;
  suppressed: number;
  bounced: number;
  complained: number;
  unsubscribed: number;
  /** shares of `sent`; null before anything was sent */
  rates: { opened: number | null; clicked: number | null; humanOpened: number | null; humanClicked: number | null };
}

export interface LinkStats {
  index: number;
  url: string | null;
  /** every click event, repeats included */
  clicks: number;
  /** distinct sends that clicked this link */
  unique: number;
  /** click events not labelled machine */
  human: number;
}

export interface TimelineBucket {
  start: Date;
  opens: number;
  clicks: number;
  humanOpens: number;
  humanClicks: number;
}

export interface CampaignReport extends CampaignSummary {
  links: LinkStats[];
  timeline: { bucketMs: number; buckets: TimelineBucket[] };
  /** why events were labelled machine: e.g. { type: 'open', reason: 'apple-mpp', events: 12 } */
  machine: { type: string; reason: string; events: number }[];
}

export interface SequenceSummary {
  id: number;
  name: string;
  steps: number;
  /** enrollments by status (active, processing, completed, failed, cancelled), zeros included */
  enrollments: Record<string, number>;
  total: number;
}

export interface ReportOptions {
  /** bucket size of the timeline; default picks one that gives at most ~48 buckets */
  bucketMs?: number;
}

export interface StatsService {
  getCampaignStats(campaignId: number | string): Promise<CampaignStats>;
  getCampaignReport(campaignId: number | string, options?: ReportOptions): Promise<CampaignReport>;
  /** newest first; `status` keeps only campaigns in that status */
  listCampaigns(options?: { limit?: number; offset?: number; status?: string }): Promise<CampaignSummary[]>;
  listSequences(): Promise<SequenceSummary[]>;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** bucket sizes a chart reads well at, smallest first */
export const BUCKETS = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 7 * DAY, 30 * DAY];
const TARGET_BUCKETS = 48;
const MAX_BUCKETS = 500;
const ENROLLMENT_STATUSES = ['active', 'processing', 'completed', 'failed', 'cancelled'];

export function createStatsService(ctx: Pick<Context, 'store'>): StatsService {
  const { stats } = ctx.store;
  const load = async (campaignId: number | string) => {
    const id = parseCampaignId(campaignId);
    const row = await stats.getCampaign(id);
    if (!row) throw new NotifyError('NOT_FOUND', `Campaign ${id} does not exist`, { campaignId: id });
    return row;
  };
  return {
    async getCampaignStats(campaignId) {
      return pickStats(await load(campaignId));
    },
    async getCampaignReport(campaignId, options = {}) {
      const row = await load(campaignId);
      const [links, machine, timeline] = await Promise.all([stats.linkClicks(row.id), stats.machineReasons(row.id), loadTimeline(ctx, row.id, options)]);
      return { ...summarize(row), links, machine, timeline };
    },
    async listCampaigns(options = {}) {
      const limit = clampInt(options.limit ?? 50, 1, 500);
      const offset = clampInt(options.offset ?? 0, 0, Number.MAX_SAFE_INTEGER);
      return (await stats.listCampaigns(limit, offset, options.status)).map(summarize);
    },
    async listSequences() {
      return (await stats.sequences()).map(summarizeSequence);
    },
  };
}

/** Campaign ids are positive integers; a string of digits (CLI, URL) is accepted. */
export function parseCampaignId(value: number | string): number {
  const n = typeof value === 'string' && /^[0-9]{1,15}$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new NotifyError('INVALID_INPUT', `Campaign id must be a positive whole number (got ${JSON.stringify(value)})`, { field: 'campaignId' });
  }
  return n;
}

/** Exactly the spec's five keys, from the counters. */
function pickStats(row: CampaignWithCounters): CampaignStats {
  const { total, sent, failed, opened, clicked } = row.counters;
  return { total, sent, failed, opened, clicked };
}

function summarize(row: CampaignWithCounters): CampaignSummary {
  const k = row.counters;
  const rate = (n: number) => (k.sent > 0 ? n / k.sent : null);
  return {
    id: row.id,
    name: row.name,
    subject: row.subject,
    status: row.status,
    created_at: new Date(row.created_at),
    sent_at: row.sent_at === null ? null : new Date(row.sent_at),
    stats: pickStats(row),
    human: { opened: k.human_opened, clicked: k.human_clicked },
    suppressed: k.suppressed,
    bounced: k.bounced,
    complained: k.complained,
    unsubscribed: k.unsubscribed,
    rates: { opened: rate(k.opened), clicked: rate(k.clicked), humanOpened: rate(k.human_opened), humanClicked: rate(k.human_clicked) },
  };
}

function summarizeSequence(row: SequenceRow): SequenceSummary {
  const enrollments: Record<string, number> = Object.fromEntries(ENROLLMENT_STATUSES.map((s) => [s, 0]));
  for (const [status, n] of Object.entries(row.enrollments)) enrollments[status] = n;
  const total = Object.values(enrollments).reduce((a, b) => a + b, 0);
  return { id: row.id, name: row.name, steps: row.steps, enrollments, total };
}

async function loadTimeline(ctx: Pick<Context, 'store'>, campaignId: number, options: ReportOptions): Promise<CampaignReport['timeline']> {
  if (options.bucketMs !== undefined && (!Number.isSafeInteger(options.bucketMs) || options.bucketMs < MINUTE || options.bucketMs > 366 * DAY)) {
    throw new NotifyError('INVALID_INPUT', 'bucketMs must be a whole number of milliseconds between one minute and a year', { field: 'bucketMs' });
  }
  const range = await ctx.store.stats.engagementRange(campaignId);
  if (!range) return { bucketMs: options.bucketMs ?? HOUR, buckets: [] };
  const bucketMs = options.bucketMs ?? pickBucket(range.last - range.first);
  const last = Math.floor(range.last / bucketMs) * bucketMs;
  // A very long tail (a years-old campaign still getting opens) keeps only the latest buckets.
  const first = Math.max(Math.floor(range.first / bucketMs) * bucketMs, last - (MAX_BUCKETS - 1) * bucketMs);
  const rows = await ctx.store.stats.timeline(campaignId, first, last + bucketMs, bucketMs);
  const buckets: TimelineBucket[] = [];
  for (let t = first; t <= last; t += bucketMs) buckets.push({ start: new Date(t), opens: 0, clicks: 0, humanOpens: 0, humanClicks: 0 });
  for (const r of rows) {
    const b = buckets[Math.round((r.start - first) / bucketMs)];
    if (!b) continue;
    if (r.type === 'open') {
      b.opens += r.events;
      if (!r.machine) b.humanOpens += r.events;
    } else {
      b.clicks += r.events;
      if (!r.machine) b.humanClicks += r.events;
    }
  }
  return { bucketMs, buckets };
}

/** The smallest readable bucket that shows the span in at most ~48 buckets. */
export function pickBucket(spanMs: number): number {
  return BUCKETS.find((b) => Math.floor(spanMs / b) + 1 <= TARGET_BUCKETS) ?? BUCKETS[BUCKETS.length - 1];
}

function clampInt(n: number, min: number, max: number): number {
  if (!Number.isFinite(n)) return min;
  return Math.min(max, Math.max(min, Math.trunc(n)));
}
