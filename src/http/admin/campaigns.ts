import type { Context as HonoContext, Hono } from 'hono';
import { type CampaignReport, type CampaignSummary, parseCampaignId, type StatsService, type TimelineBucket } from '../../core/stats.ts';
import { isNotifyError } from '../../errors.ts';
import type { Views } from '../../render/views.ts';
import { lineChart } from './chart.ts';
import { listOutbox, outboxDir } from './outbox-files.ts';
import { adminPage, fmtDate, fmtRate, notFound, pageParam } from './render.ts';
import type { Context } from '../../context.ts';
import { allows } from '../../core/campaign-status.ts';
import type { CampaignsService } from '../../core/campaigns.ts';
import type { Campaign } from '../../core/types.ts';
import { registerCampaignActions } from './campaign-actions.ts';
import { csrfToken } from './csrf.ts';

const PER_PAGE = 50;
const MINUTE = 60_000;
export const BUCKET_CHOICES: Record<string, number> = { '1m': MINUTE, '5m': 5 * MINUTE, '15m': 15 * MINUTE, '1h': 60 * MINUTE, '6h': 360 * MINUTE, '1d': 1440 * MINUTE, '7d': 7 * 1440 * MINUTE };

interface Parts {
  ctx: Context;
  views: Views;
  stats: StatsService;
  campaigns: CampaignsService;
}

/** GET /notify/admin (campaigns, sequences, outbox count) and GET /notify/admin/campaigns/:id */
export function registerCampaignPages(app: Hono, { ctx, views, stats, campaigns }: Parts): void {
  const dashboard = async (c: HonoContext) => {
    const page = pageParam(c.req.query('page'));
    const rows = await stats.listCampaigns({ limit: PER_PAGE + 1, offset: (page - 1) * PER_PAGE });
    const dir = outboxDir(ctx.config);
    return adminPage(c, views, 'dashboard', {
      title: 'Campaigns',
      campaigns: rows.slice(0, PER_PAGE).map(view),
      prevPage: page > 1 ? page - 1 : null,
      nextPage: rows.length > PER_PAGE ? page + 1 : null,
      sequences: await stats.listSequences(),
      outbox: dir ? { dir, count: (await listOutbox(dir)).length } : null,
    });
  };
  app.get('/notify/admin', dashboard);
  app.get('/notify/admin/', dashboard);

  const campaignPage = async (c: HonoContext, id: string, extra: { error?: string; status?: number } = {}) => {
    const report = await loadReport(stats, id, c.req.query('bucket'));
    const campaign = report && (await ctx.store.campaigns.getById(report.id));
    if (!report || !campaign) return notFound(c, views, 'There is no such campaign.');
    const notice = extra.error ? null : noticeOf(c.req.query('done'));
    return adminPage(c, views, 'campaign', { ...campaignData(report), lc: lifecycleView(campaign, ctx.clock.now()), csrf: csrfToken(c, ctx.secret), notice, error: extra.error ?? null }, extra.status);
  };
  app.get('/notify/admin/campaigns/:id', (c) => campaignPage(c, c.req.param('id')));
  registerCampaignActions(app, { ctx, views, campaigns, showRefusal: (c, id, error, status) => campaignPage(c, id, { error, status }) });

  app.get('/notify/admin/campaigns/:id/report.json', async (c) => {
    const report = await loadReport(stats, c.req.param('id'), c.req.query('bucket'));
    if (!report) return c.json({ error: 'not_found' }, 404, { 'Cache-Control': 'no-store' });
    return c.json(report, 200, { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  });
}

const NOTICES: Record<string, string> = {
  created: 'Saved as a draft. Send yourself a test, then schedule it.',
  schedule: 'Scheduled. A running worker starts it at that time.',
  pause: 'Paused. No further message of this campaign leaves.',
  resume: 'Resumed. A running worker continues where it stopped.',
  cancel: 'Cancelled.',
};

function noticeOf(done: string | undefined): string | null {
  if (!done) return null;
  const test = /^test-(\d{1,3})$/.exec(done);
  if (test) return `${test[1]} test ${test[1] === '1' ? 'copy' : 'copies'} sent (not counted).`;
  return Object.hasOwn(NOTICES, done) ? NOTICES[done] : null;
}

/** what the page shows and offers for the campaign's status */
function lifecycleView(c: Campaign, now: number) {
  return {
    status: c.status,
    sendAt: c.status === 'scheduled' ? fmtDate(c.send_at) : '',
    reason: c.status_reason,
    can: Object.fromEntries((['schedule', 'pause', 'resume', 'cancel'] as const).map((a) => [a, allows(a, c.status)])),
    canTest: c.status !== 'cancelled',
    // an hour from now, to the minute, as the form's starting value
    defaultSendAt: new Date(Math.ceil((now + 3_600_000) / 60_000) * 60_000).toISOString().slice(0, 16),
  };
}

async function loadReport(stats: StatsService, id: string, bucket: string | undefined): Promise<CampaignReport | undefined> {
  try {
    const bucketMs = bucket && Object.hasOwn(BUCKET_CHOICES, bucket) ? BUCKET_CHOICES[bucket] : undefined;
    return await stats.getCampaignReport(parseCampaignId(id), { bucketMs });
  } catch (err) {
    if (isNotifyError(err, 'NOT_FOUND') || isNotifyError(err, 'INVALID_INPUT')) return undefined;
    throw err;
  }
}

function view(s: CampaignSummary) {
  return {
    ...s,
    title: s.name || s.subject || `Campaign ${s.id}`,
    created: fmtDate(s.created_at),
    sentAt: fmtDate(s.sent_at),
    openRate: fmtRate(s.rates.opened),
    humanOpenRate: fmtRate(s.rates.humanOpened),
    clickRate: fmtRate(s.rates.clicked),
    humanClickRate: fmtRate(s.rates.humanClicked),
  };
}

function campaignData(r: CampaignReport) {
  const { bucketMs } = r.timeline;
  const buckets = padSingle(r.timeline.buckets, bucketMs);
  const input = {
    title: `Opens and clicks over time, campaign ${r.id}`,
    times: buckets.map((b) => b.start),
    bucketMs,
    series: [
      { label: 'Opens', color: '#2563eb', values: buckets.map((b) => b.opens) },
      { label: 'Human opens', color: '#2563eb', dashed: true, values: buckets.map((b) => b.humanOpens) },
      { label: 'Clicks', color: '#ea580c', values: buckets.map((b) => b.clicks) },
      { label: 'Human clicks', color: '#ea580c', dashed: true, values: buckets.map((b) => b.humanClicks) },
    ],
  };
  // one drawing for wide screens and one at a phone's width, so its text stays at its real size there
  const chart = lineChart(input);
  const narrowChart = lineChart({ ...input, width: 360, height: 300 });
  return {
    title: r.name || r.subject,
    c: view(r),
    chart,
    narrowChart,
    bucketLabel: Object.entries(BUCKET_CHOICES).find(([, ms]) => ms === bucketMs)?.[0] ?? `${Math.round(bucketMs / MINUTE)}m`,
    bucketChoices: Object.keys(BUCKET_CHOICES),
    machine: r.machine,
    // Only http(s) destinations become links in the admin page; anything else is shown as text.
    links: r.links.map((l) => ({ ...l, url: l.url ?? '(unknown link)', href: l.url && /^https?:\/\//i.test(l.url) ? l.url : null })),
  };
}

/** One bucket alone draws as a dot; empty neighbours make it read as the spike it is. */
function padSingle(buckets: TimelineBucket[], bucketMs: number): TimelineBucket[] {
  if (buckets.length !== 1) return buckets;
  const empty = (t: number) => ({ start: new Date(t), opens: 0, clicks: 0, humanOpens: 0, humanClicks: 0 });
  const t = buckets[0].start.getTime();
  return [empty(t - bucketMs), buckets[0], empty(t + bucketMs)];
}
