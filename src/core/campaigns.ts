import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import type { ContentInput } from '../render/source.ts';
import { runCampaign, type RunOptions } from './campaign-run.ts';
import { checkHeaders, formatFrom } from './headers.ts';
import { checkMessage, optionalFlag, optionalString } from './message-input.ts';
import { requireList } from './lists.ts';
import { requireReferences } from './segment-references.ts';
import { parseSegment, type Segment } from './segments.ts';
import type { Campaign, CampaignRunResult, CampaignStatus } from './types.ts';
import { checkStatus, type CampaignLifecycle, createCampaignLifecycle } from './campaign-lifecycle.ts';
import { ALLOWED_FROM, allows, invalidState } from './campaign-status.ts';
import { sendTestCopies, type TestSendInput, type TestSendResult } from './campaign-test-send.ts';
import { type CampaignPreview, type PreviewOptions, previewCampaign } from './campaign-preview.ts';

export interface CampaignInput extends ContentInput {
  subject: string;
  name?: string | null;
  /** layout view name; default: defaultLayout; false: none */
  layout?: string | false | null;
  /** name of an existing list; omitted = every contact */
  list?: string | null;
  /** a segment filter (object or its JSON text); combines with `list` by AND */
  segment?: Segment | string | null;
  fromName?: string | null;
  fromEmail?: string | null;
  /** Liquid variables for every recipient (besides `contact` and `campaign`) */
  data?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** the open pixel; default (or null): the trackOpens option */
  trackOpens?: boolean | null;
  /** links through /notify/click; default (or null): the trackClicks option */
  trackClicks?: boolean | null;
}

export interface CampaignListOptions {
  status?: CampaignStatus;
  /** default 50, at most 1000 */
  limit?: number;
  /** ids above this one: the last id of the previous page */
  after?: number;
}

/** The campaign methods of the public `notify.campaigns` (notify.ts adds the stats readers). */
export interface CampaignsApi extends CampaignLifecycle {
  create(input: CampaignInput): Promise<Campaign>;
  get(campaignId: number): Promise<Campaign | undefined>;
  /** one run of notify:send-campaign */
  send(campaignId: number, opts?: RunOptions): Promise<CampaignRunResult>;
  /** in id order; `after` = the last id of the previous page */
  list(options?: CampaignListOptions): Promise<Campaign[]>;
  /** a draft, scheduled or paused campaign's content, audience or sender (INVALID_STATE otherwise) */
  update(campaignId: number, fields: Partial<CampaignInput>): Promise<Campaign>;
  /** a draft only */
  delete(campaignId: number): Promise<void>;
  /** real rendered copies to these addresses; no send row, no stats */
  sendTest(campaignId: number, input: TestSendInput): Promise<TestSendResult>;
  /** who a send would reach now: audience members without a send row, suppressed ones left out */
  audience(campaignId: number): Promise<{ count: number }>;
}

/** What the admin pages use besides the public methods. */
export interface CampaignsService extends CampaignsApi {
  /** who a new campaign to this list and/or segment would reach now (suppressed contacts left out) */
  countAudience(target: Pick<CampaignInput, 'list' | 'segment'>): Promise<{ count: number }>;
  /** the message as the chosen contact would get it, without tracking; nothing stored or sent */
  preview(input: CampaignInput, opts?: PreviewOptions): Promise<CampaignPreview>;
}

const MAX_DATA = 64 * 1024;

export function createCampaignsService(ctx: Context): CampaignsService {
  return {
    async create(input) {
      const { list, segment, ...row } = validateCampaign(ctx, input);
      const listRow = list === null ? null : await requireList(ctx, list);
      if (segment) await requireReferences(ctx, segment);
      return ctx.store.campaigns.create({ ...row, list_id: listRow?.id ?? null, segment: segment ? (segmentInput(input.segment) as Segment) : null }, ctx.clock.now());
    },
    get: (id) => ctx.store.campaigns.getById(checkId(id)),
    send: (id, opts) => runCampaign(ctx, checkId(id), opts),
    ...createCampaignLifecycle(ctx, checkId),
    async list(options = {}) {
      if (typeof options !== 'object' || options === null) throw new NotifyError('INVALID_INPUT', 'campaigns.list() takes an options object');
      const limit = options.limit ?? 50;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new NotifyError('INVALID_INPUT', `limit must be a whole number from 1 to 1000 (got ${JSON.stringify(limit)})`, { field: 'limit' });
      const after = options.after === undefined ? undefined : checkId(options.after);
      return ctx.store.campaigns.list({ status: checkStatus(options.status), limit, after });
    },
    async update(id, fields) {
      const current = await existing(ctx, checkId(id));
      if (!allows('update', current.status)) throw invalidState('update', current);
      if (typeof fields !== 'object' || fields === null) throw new NotifyError('INVALID_INPUT', 'campaigns.update() needs an object of fields');
      const base = inputOf(current);
      // a new body replaces the old one (a campaign has one of html, markdown, markdownFile)
      if (fields.html !== undefined || fields.markdown !== undefined || fields.markdownFile !== undefined) {
        base.html = base.markdown = base.markdownFile = undefined;
      }
      const { list, segment, ...row } = validateCampaign(ctx, { ...base, ...withoutUndefined(fields) } as CampaignInput);
      const listRow = list === null ? null : await requireList(ctx, list);
      if (segment) await requireReferences(ctx, segment);
      const changes = { ...row, list_id: listRow?.id ?? null, segment: segment ? (segmentInput(fields.segment ?? current.segment) as Segment) : null };
      const updated = await ctx.store.campaigns.update(current.id, ALLOWED_FROM.update, changes);
      if (!updated) throw invalidState('update', (await ctx.store.campaigns.getById(current.id)) ?? current);
      return updated;
    },
    async delete(id) {
      const current = await existing(ctx, checkId(id));
      if (!allows('delete', current.status) || !(await ctx.store.campaigns.deleteDraft(current.id))) {
        throw invalidState('delete', (await ctx.store.campaigns.getById(current.id)) ?? current);
      }
    },
    async sendTest(id, input) {
      return sendTestCopies(ctx, await existing(ctx, checkId(id)), input);
    },
    async audience(id) {
      return { count: await ctx.store.campaigns.countReachable(await existing(ctx, checkId(id))) };
    },
    async countAudience(target) {
      if (typeof target !== 'object' || target === null) throw new NotifyError('INVALID_INPUT', 'countAudience() needs { list?, segment? }');
      const list = optionalString(target.list, 'list', 100);
      const segment = target.segment == null || target.segment === '' ? null : parseSegment(target.segment);
      const listRow = list === null ? null : await requireList(ctx, list);
      if (segment) await requireReferences(ctx, segment);
      // id 0 has no send rows: everyone the filter matches is still to be reached
      return { count: await ctx.store.campaigns.countReachable({ id: 0, list: listRow?.name ?? null, segment: segment ? (segmentInput(target.segment) as Segment) : null }) };
    },
    preview: (input, opts) => previewCampaign(ctx, input, opts),
  };
}

async function existing(ctx: Context, id: number): Promise<Campaign> {
  const c = await ctx.store.campaigns.getById(id);
  if (!c) throw new NotifyError('NOT_FOUND', `Campaign ${id} not found`, { campaignId: id });
  return c;
}

/** a stored campaign as the input that would create it (what update() merges the changes into) */
function inputOf(c: Campaign): CampaignInput {
  return {
    subject: c.subject,
    name: c.name,
    html: c.html ?? undefined,
    markdown: c.markdown ?? undefined,
    markdownFile: c.markdown_file ?? undefined,
    text: c.text ?? undefined,
    layout: c.layout,
    list: c.list,
    segment: c.segment,
    fromName: c.from_name,
    fromEmail: c.from_email,
    data: c.data,
    headers: c.headers,
    trackOpens: c.track_opens,
    trackClicks: c.track_clicks,
  };
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** the filter as stored: the object given, or the one its JSON text holds */
function segmentInput(segment: unknown): unknown {
  return typeof segment === 'string' ? JSON.parse(segment) : segment;
}

function checkId(id: unknown): number {
  const n = typeof id === 'string' && /^[0-9]+$/.test(id) ? Number(id) : id;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new NotifyError('INVALID_INPUT', `Invalid campaign id ${JSON.stringify(id)}`, { field: 'id' });
  return n;
}


/** Everything that can be checked before the first send is checked here, so a broken campaign fails at create. */
function validateCampaign(ctx: Context, input: CampaignInput) {
  if (typeof input !== 'object' || input === null) throw new NotifyError('INVALID_INPUT', 'campaigns.create() needs an object');
  const { subject, layout } = checkMessage(ctx, input);
  const headers = checkHeaders(input.headers);
  const fromName = optionalString(input.fromName, 'fromName', 200);
  const fromEmail = optionalString(input.fromEmail, 'fromEmail', 254);
  if (fromName || fromEmail) formatFrom(fromName ?? '', fromEmail || 'check@example.com');
  const data = input.data ?? {};
  if (typeof data !== 'object' || Array.isArray(data) || JSON.stringify(data).length > MAX_DATA) {
    throw new NotifyError('INVALID_INPUT', `data must be an object of at most ${MAX_DATA} bytes of JSON`, { field: 'data' });
  }
  return {
    name: optionalString(input.name, 'name', 200),
    subject,
    html: input.html || null,
    markdown: input.markdown || null,
    markdown_file: input.markdownFile || null,
    text: input.text || null,
    layout,
    list: optionalString(input.list, 'list', 100),
    segment: input.segment == null ? null : parseSegment(input.segment),
    from_name: fromName,
    from_email: fromEmail,
    data,
    headers,
    track_opens: optionalFlag(input.trackOpens, 'trackOpens'),
    track_clicks: optionalFlag(input.trackClicks, 'trackClicks'),
  };
}
