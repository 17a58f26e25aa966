import type { JsonSchema } from './route.ts';
import { ref } from './route.ts';
import { arrayOf, bool, counts, dateTime, freeObject, input, int, nullable, record, str, text } from './schemas.ts';

const rate = nullable({ type: 'number' });
const layout: JsonSchema = { anyOf: [{ type: 'string' }, { const: false }, { type: 'null' }], description: 'layout view name; null = defaultLayout; false = none' };
const statuses = ['draft', 'scheduled', 'sending', 'paused', 'cancelled', 'sent'];
export const CAMPAIGN_STATUSES_ENUM: JsonSchema = { type: 'string', enum: statuses };

const summary = {
  id: int,
  name: nullable(str),
  subject: str,
  status: { type: 'string', enum: statuses },
  created_at: dateTime,
  sent_at: nullable(dateTime),
  stats: ref('CampaignStats'),
  human: record({ opened: int, clicked: int }),
  suppressed: int,
  bounced: int,
  complained: int,
  unsubscribed: int,
  rates: record({ opened: rate, clicked: rate, humanOpened: rate, humanClicked: rate }),
};

export const campaignSchemas: Record<string, JsonSchema> = {
  Campaign: record(
    {
      id: int,
      name: nullable(str),
      subject: str,
      html: nullable(str),
      markdown: nullable(str),
      markdown_file: nullable(str),
      text: nullable(str),
      layout,
      list: { ...nullable(str), description: 'list name; null = every contact' },
      segment: nullable(freeObject),
      from_name: nullable(str),
      from_email: nullable(str),
      data: freeObject,
      headers: { type: 'object', additionalProperties: str },
      status: { type: 'string', enum: statuses },
      created_at: dateTime,
      sent_at: nullable(dateTime),
      send_at: { ...nullable(dateTime), description: 'when a scheduled campaign starts' },
      status_reason: { ...nullable(str), description: 'why notify paused it on its own' },
      track_opens: { ...nullable(bool), description: 'the open pixel; null = the trackOpens option' },
      track_clicks: { ...nullable(bool), description: 'links through /notify/click; null = the trackClicks option' },
    },
    ['send_at', 'status_reason'],
  ),
  CampaignRunResult: record(
    {
      ...counts('campaignId', 'sent', 'failed', 'suppressed'),
      interrupted: { ...int, description: 'rows a crashed run left sending, marked failed (reason interrupted)' },
      remaining: { ...int, description: 'audience members still without a send row' },
      deferred: { ...int, description: 'sends of this run that failed for a reason that may pass; retried later' },
      waiting: { ...int, description: 'sends not yet final (deferred or claimed by an unfinished run); the campaign is not sent while any remain' },
      nextAttemptAt: { ...dateTime, description: 'the earliest next try of a deferred send' },
      done: { type: 'boolean', description: 'nothing was left and the campaign is now sent' },
      status: { type: 'string', enum: statuses },
      note: { ...str, description: 'why this run sent nothing more' },
      dryRun: { ...int, description: 'testMode: the messages this run would have sent' },
    },
    ['status', 'note', 'dryRun', 'nextAttemptAt'],
  ),
  CampaignStats: record({ total: int, sent: int, failed: int, opened: int, clicked: int }),
  CampaignSummary: record(summary),
  CampaignReport: record({
    ...summary,
    links: arrayOf(record({ index: int, url: nullable(str), clicks: int, unique: int, human: int })),
    timeline: record({ bucketMs: int, buckets: arrayOf(record({ start: dateTime, opens: int, clicks: int, humanOpens: int, humanClicks: int })) }),
    machine: arrayOf(record({ type: str, reason: str, events: int })),
  }),
};

export const CAMPAIGN_INPUT = input(
  {
    subject: text(998),
    name: nullable(text(200)),
    html: text(512 * 1024),
    markdown: text(512 * 1024),
    markdownFile: { ...text(1000), description: 'a file under markdownPath' },
    text: text(512 * 1024),
    layout,
    list: { ...nullable(text(100)), description: 'name of an existing list; omitted = every contact' },
    segment: { anyOf: [freeObject, text(16_384), { type: 'null' }], description: 'a segment filter (object or its JSON text)' },
    fromName: nullable(text(200)),
    fromEmail: nullable(text(254)),
    data: { ...freeObject, description: 'Liquid variables for every recipient' },
    headers: { type: 'object', additionalProperties: text(998) },
    trackOpens: { ...nullable(bool), description: 'the open pixel; null = the trackOpens option' },
    trackClicks: { ...nullable(bool), description: 'links through /notify/click; null = the trackClicks option' },
  },
  ['subject'],
);

/** PATCH: the same fields, none required */
export const CAMPAIGN_UPDATE: JsonSchema = { ...CAMPAIGN_INPUT, required: [], minProperties: 1 };
