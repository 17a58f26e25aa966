import { parseCampaignId } from '../../core/stats.ts';
import type { CampaignInput } from '../../core/campaigns.ts';
import type { Notify } from '../../notify.ts';
import { BUCKET_CHOICES } from '../admin/campaigns.ts';
import { CAMPAIGN_INPUT, CAMPAIGN_STATUSES_ENUM, CAMPAIGN_UPDATE, campaignSchemas } from './campaign-schemas.ts';
import type { ApiRoute, ApiResponse, JsonSchema } from './route.ts';
import { found, ref } from './route.ts';
import { arrayOf, digits, input, int, record, str, text } from './schemas.ts';

export { campaignSchemas };

const idParam = { id: { description: 'campaign id', schema: digits } };
const campaignReply: ApiResponse = { description: 'the campaign', schema: ref('Campaign') };

/**
 * An operation on one campaign over one notify.campaigns call: `POST /campaigns/{id}/<name>` by
 * default, answered with what the call returns (or, when it returns nothing, the campaign as it is
 * afterwards). Each lifecycle operation (update, delete, schedule, pause, resume, cancel, test,
 * audience) is one such line at the end of campaignRoutes; an empty name is `/campaigns/{id}` itself.
 */
export function campaignAction(
  name: string,
  summary: string,
  run: (notify: Notify, id: number, body: Record<string, unknown>) => Promise<unknown>,
  opts: { body?: JsonSchema; response?: ApiResponse; method?: 'post' | 'get' | 'patch' | 'delete'; operationId?: string; problems?: number[] } = {},
): ApiRoute {
  const method = opts.method ?? 'post';
  return {
    method,
    path: name ? `/campaigns/{id}/${name}` : '/campaigns/{id}',
    operationId: opts.operationId ?? `${name}Campaign`.replace(/[-_](.)/g, (_, ch: string) => ch.toUpperCase()),
    tag: 'campaigns',
    summary,
    params: idParam,
    ...(opts.body ? { body: { schema: opts.body } } : {}),
    responses: method === 'delete' ? { 204: { description: 'done' } } : { 200: opts.response ?? campaignReply },
    problems: opts.problems ?? [404, 409, 422],
    handle: async ({ deps, params, body }) => {
      const result = await run(deps.notify, parseCampaignId(params.id), (body ?? {}) as Record<string, unknown>);
      if (method === 'delete') return { status: 204 };
      return { body: result === undefined ? await campaign(deps.notify, params.id) : result };
    },
  };
}

const campaign = async (notify: Notify, id: string) => found(await notify.campaigns.get(parseCampaignId(id)), `Campaign ${id} does not exist`, 'id');

export const campaignRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/campaigns',
    operationId: 'listCampaigns',
    tag: 'campaigns',
    summary: 'Campaigns, newest first, each with its figures',
    query: {
      limit: { description: '1 to 500 (default 50)', schema: digits },
      offset: { description: 'campaigns to skip', schema: digits },
      status: { description: 'only campaigns in this status', schema: CAMPAIGN_STATUSES_ENUM },
    },
    responses: { 200: { description: 'a page of campaigns', schema: record({ campaigns: arrayOf(ref('CampaignSummary')) }) } },
    problems: [422],
    handle: async ({ deps, query }) => ({
      body: {
        campaigns: await deps.stats.listCampaigns({
          limit: query.limit === undefined ? 50 : Number(query.limit),
          offset: query.offset === undefined ? 0 : Number(query.offset),
          status: query.status as string | undefined,
        }),
      },
    }),
  },
  {
    method: 'post',
    path: '/campaigns',
    operationId: 'createCampaign',
    tag: 'campaigns',
    summary: 'Create a draft campaign (checked now: subject, one body, layout, Liquid, list, segment)',
    body: { schema: CAMPAIGN_INPUT },
    responses: { 201: { description: 'the new campaign', schema: ref('Campaign') } },
    problems: [404, 422],
    handle: async ({ deps, body }) => {
      const created = await deps.notify.campaigns.create(body as CampaignInput);
      return { status: 201, body: created, headers: { Location: `/notify/api/v1/campaigns/${created.id}` } };
    },
  },
  {
    method: 'get',
    path: '/campaigns/{id}',
    operationId: 'getCampaign',
    tag: 'campaigns',
    summary: 'One campaign as created',
    params: idParam,
    responses: { 200: campaignReply },
    problems: [404, 422],
    handle: async ({ deps, params }) => ({ body: await campaign(deps.notify, params.id) }),
  },
  {
    method: 'get',
    path: '/campaigns/{id}/stats',
    operationId: 'getCampaignStats',
    tag: 'campaigns',
    summary: 'getCampaignStats: total, sent, failed, opened, clicked',
    params: idParam,
    responses: { 200: { description: 'the figures', schema: ref('CampaignStats') } },
    problems: [404, 422],
    handle: async ({ deps, params }) => ({ body: await deps.notify.campaigns.getCampaignStats(parseCampaignId(params.id)) }),
  },
  {
    method: 'get',
    path: '/campaigns/{id}/report',
    operationId: 'getCampaignReport',
    tag: 'campaigns',
    summary: 'The full report: suppressed, bounced, complained, unsubscribed, human-only figures, per link, over time',
    params: idParam,
    query: { bucket: { description: 'timeline bucket size (default: one that gives about 48 buckets)', schema: { type: 'string', enum: Object.keys(BUCKET_CHOICES) } } },
    responses: { 200: { description: 'the report', schema: ref('CampaignReport') } },
    problems: [404, 422],
    handle: async ({ deps, params, query }) => {
      const bucketMs = query.bucket === undefined ? undefined : BUCKET_CHOICES[query.bucket as string];
      return { body: await deps.notify.campaigns.getCampaignReport(parseCampaignId(params.id), { bucketMs }) };
    },
  },
  campaignAction('send', 'One run of notify:send-campaign: sends the next batch (batchSize) and says what is left', (n, id) => n.campaigns.send(id), {
    response: { description: 'what the run did', schema: ref('CampaignRunResult') },
  }),
  campaignAction('', 'Change the content, audience or sender of a draft, scheduled or paused campaign', (n, id, b) => n.campaigns.update(id, b), {
    method: 'patch',
    body: CAMPAIGN_UPDATE,
    operationId: 'updateCampaign',
  }),
  campaignAction('', 'Delete a draft', (n, id) => n.campaigns.delete(id), { method: 'delete', operationId: 'deleteCampaign', problems: [404, 409] }),
  campaignAction('schedule', 'Schedule a draft (or move a scheduled or paused one) to start at send_at', (n, id, b) => n.campaigns.schedule(id, b.send_at as string), {
    body: input({ send_at: { ...text(40), description: 'ISO 8601 time; without an offset it is UTC; must be in the future' } }, ['send_at']),
  }),
  campaignAction('pause', 'Pause a scheduled or sending campaign; returns once no further message of it leaves', (n, id) => n.campaigns.pause(id), { problems: [404, 409] }),
  campaignAction('resume', 'Resume a paused campaign (scheduled again when its start time is still ahead)', (n, id) => n.campaigns.resume(id), { problems: [404, 409] }),
  campaignAction('cancel', 'Cancel for good; returns once no further message of it leaves', (n, id) => n.campaigns.cancel(id), { problems: [404, 409] }),
  campaignAction('test', 'Send test copies as the audience gets them; no row, counter or status changes', (n, id, b) => n.campaigns.sendTest(id, { to: b.to as string[] }), {
    operationId: 'sendTestCampaign',
    body: input({ to: { type: 'array', items: text(254), minItems: 1, maxItems: 20, description: 'addresses to send a copy to' } }, ['to']),
    response: { description: 'which copies left', schema: record({ sent: arrayOf(str), failed: arrayOf(record({ to: str, error: str })) }) },
  }),
  campaignAction('audience', 'Who a send would reach now (members without a send row, suppressed ones left out)', (n, id) => n.campaigns.audience(id), {
    method: 'get',
    response: { description: 'the count', schema: record({ count: int }) },
    problems: [404, 422],
  }),
];
