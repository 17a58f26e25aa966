import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import type { ContentInput } from '../render/source.ts';
import { checkHeaders, formatFrom } from './headers.ts';
import { checkMessage, optionalFlag, optionalString } from './message-input.ts';
import { parseSegment, type Segment } from './segments.ts';
import type { Campaign } from './types.ts';

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

const MAX_DATA = 64 * 1024;


/** Everything that can be checked before the first send is checked here, so a broken campaign fails at create. */
export function validateCampaign(ctx: Context, input: CampaignInput) {
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

/** the stored column of each CampaignInput field (its own name where this does not say otherwise) */
const COLUMN_OF: Partial<Record<keyof CampaignInput, keyof Campaign>> = {
  markdownFile: 'markdown_file',
  fromName: 'from_name',
  fromEmail: 'from_email',
  trackOpens: 'track_opens',
  trackClicks: 'track_clicks',
};
const INPUT_FIELDS: (keyof CampaignInput)[] = ['subject', 'name', 'html', 'markdown', 'markdownFile', 'text', 'layout', 'list', 'segment', 'fromName', 'fromEmail', 'data', 'headers', 'trackOpens', 'trackClicks'];
/** the bodies: a stored null is one the input never had, so it goes back as absent */
const BODIES: (keyof CampaignInput)[] = ['html', 'markdown', 'markdownFile', 'text'];

/** a stored campaign as the input that would create it (what update() merges the changes into) */
export function inputOf(c: Campaign): CampaignInput {
  const row = c as unknown as Record<string, unknown>;
  const fields = INPUT_FIELDS.map((f) => {
    const value = row[COLUMN_OF[f] ?? f];
    return [f, BODIES.includes(f) ? (value ?? undefined) : value];
  });
  return Object.fromEntries(fields) as CampaignInput;
}

export function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** the filter as stored: the object given, or the one its JSON text holds */
export function segmentInput(segment: unknown): unknown {
  return typeof segment === 'string' ? JSON.parse(segment) : segment;
}
