import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { type CampaignInput, inputOf, segmentInput, validateCampaign, withoutUndefined } from './campaign-input.ts';
import { type CampaignLifecycle, checkStatus, createCampaignLifecycle } from './campaign-lifecycle.ts';
import { type CampaignPreview, type PreviewOptions, previewCampaign } from './campaign-preview.ts';
import { runCampaign, type RunOptions } from './campaign-run.ts';
import { ALLOWED_FROM, allows, invalidState } from './campaign-status.ts';
import { sendTestCopies, type TestSendInput, type TestSendResult } from './campaign-test-send.ts';
import { requireList } from './lists.ts';
import { optionalString } from './message-input.ts';
import { requireReferences } from './segment-references.ts';
import { parseSegment, type Segment, type SegmentNode } from './segments.ts';
import type { Campaign, CampaignRunResult, CampaignStatus } from './types.ts';

export type { CampaignInput } from './campaign-input.ts';

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

export function createCampaignsService(ctx: Context): CampaignsService {
  return {
    async create(input) {
      const { list, segment, ...row } = validateCampaign(ctx, input);
      const listRow = await requireAudience(ctx, list, segment);
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
      const listRow = await requireAudience(ctx, list, segment);
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
      const listRow = await requireAudience(ctx, list, segment);
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

/** The list and segment a campaign is sent to, checked to exist (NOT_FOUND otherwise); the list's row. */
async function requireAudience(ctx: Context, list: string | null, segment: SegmentNode | null) {
  const listRow = list === null ? null : await requireList(ctx, list);
  if (segment) await requireReferences(ctx, segment);
  return listRow;
}

function checkId(id: unknown): number {
  const n = typeof id === 'string' && /^[0-9]+$/.test(id) ? Number(id) : id;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new NotifyError('INVALID_INPUT', `Invalid campaign id ${JSON.stringify(id)}`, { field: 'id' });
  return n;
}
