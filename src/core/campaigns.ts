import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import type { ContentInput } from '../render/source.ts';
import { runCampaign, type RunOptions } from './campaign-run.ts';
import { checkHeaders, formatFrom } from './headers.ts';
import { checkMessage, optionalString } from './message-input.ts';
import { requireList } from './lists.ts';
import { requireReferences } from './segment-references.ts';
import { parseSegment, type Segment } from './segments.ts';
import type { Campaign, CampaignRunResult } from './types.ts';

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
}

export interface CampaignsService {
  create(input: CampaignInput): Promise<Campaign>;
  get(id: number): Promise<Campaign | undefined>;
  send(id: number, opts?: RunOptions): Promise<CampaignRunResult>;
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
  };
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
  };
}
