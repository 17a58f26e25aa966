import { listHeaders } from './list-headers.ts';
import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { type ContentInput, checkContent } from '../render/source.ts';
import { isLeftOut, SEND_CATEGORIES, type SendCategory } from './categories.ts';
import type { ContactsService } from './contacts.ts';
import { createDeliveryRun, type Delivered, type DeliveryJob } from './delivery.ts';
import type { PreparedMessage } from './dispatch.ts';
import { emailKey, normalizeEmail } from './email.ts';
import { checkHeaders, checkSubject, formatFrom } from './headers.ts';
import { optionalFlag } from './message-input.ts';
import { newToken } from './tokens.ts';
import type { ContactStatus, SendRecord, SuppressedRecipient } from './types.ts';

/** notify.send(): one message, now. */
export interface SendInput extends ContentInput {
  to: string | string[];
  cc?: string | string[];
  bcc?: string | string[];
  subject: string;
  /** custom headers; an own List-Unsubscribe is kept and notify adds neither List-Unsubscribe header */
  headers?: Record<string, string>;
  fromName?: string;
  fromEmail?: string;
  /** layout view; default: defaultLayout; false: none */
  layout?: string | false;
  /** Liquid variables besides `contact` */
  data?: Record<string, unknown>;
  /** the open pixel; default: the trackOpens option */
  trackOpens?: boolean;
  /** links through /notify/click; default: the trackClicks option */
  trackClicks?: boolean;
  /**
   * `marketing` (default): unsubscribed, bounced and complained recipients are left out.
   * `transactional` (receipts, password resets): reaches an unsubscribed contact, never a bounced
   * or complained one, and carries no List-Unsubscribe headers.
   */
  category?: SendCategory;
}


const MAX_RECIPIENTS = 50;

/**
 * Validates everything first (nothing is stored for a refused message), leaves out suppressed
 * recipients (named on the send row; all left out: a `suppressed` record, nothing delivered), creates
 * the send row, then delivers.
 * A single recipient gets a contact (created `transactional` when unknown) so its unsubscribe link and
 * List-Unsubscribe work.
 */
export async function sendOne(ctx: Context, contacts: Pick<ContactsService, 'get' | 'upsert'>, input: SendInput): Promise<SendRecord> {
  if (typeof input !== 'object' || input === null) throw new NotifyError('INVALID_INPUT', 'send() needs a message object');
  const to = addresses(input.to, 'to');
  const cc = addresses(input.cc, 'cc');
  const bcc = addresses(input.bcc, 'bcc');
  if (to.length === 0) throw new NotifyError('INVALID_INPUT', 'send() needs at least one "to" address', { field: 'to' });
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) throw new NotifyError('INVALID_INPUT', `At most ${MAX_RECIPIENTS} recipients per message`, { field: 'to' });
  const subject = checkSubject(input.subject);
  checkHeaders(input.headers);
  formatFrom(input.fromName ?? ctx.config.fromName, input.fromEmail || ctx.config.fromEmail);
  checkContent(input);
  const trackOpens = optionalFlag(input.trackOpens, 'trackOpens');
  const trackClicks = optionalFlag(input.trackClicks, 'trackClicks');
  const category = input.category ?? 'marketing';
  if (!(SEND_CATEGORIES as readonly string[]).includes(category)) {
    throw new NotifyError('INVALID_INPUT', `category must be one of ${SEND_CATEGORIES.join(', ')}`, { field: 'category' });
  }

  const statuses = await ctx.store.contacts.statusesByEmailKey([...new Set([...to, ...cc, ...bcc].map(emailKey))]);
  const { live, dropped } = leaveOutSuppressed({ to, cc, bcc }, statuses, category);
  const [liveTo, liveCc, liveBcc] = [live.to, live.cc, live.bcc];
  const now = ctx.clock.now();
  const all = [...liveTo, ...liveCc, ...liveBcc];
  if (all.length === 0) {
    const firstId = statuses.get(emailKey(to[0]))?.id ?? null;
    return ctx.store.sends.create({ token: newToken(), contact_id: firstId, to_email: to[0], subject, status: 'suppressed', suppressed_recipients: dropped }, now);
  }
  // A one-off message is nobody's subscription: an unknown address becomes `transactional`, which no
  // campaign reaches; a known contact keeps its status.
  const contact = all.length === 1 ? ((await contacts.get(all[0])) ?? (await contacts.upsert({ email: all[0] }, { initialStatus: 'transactional' }))) : null;
  const row = await ctx.store.sends.create(
    {
      token: newToken(),
      contact_id: contact?.id ?? statuses.get(emailKey(liveTo[0] ?? all[0]))?.id ?? null,
      to_email: liveTo[0] ?? all[0],
      subject,
      status: 'sending',
      suppressed_recipients: dropped,
    },
    now,
  );
  const spec = { subject, html: input.html, markdown: input.markdown, markdownFile: input.markdownFile, text: input.text, layout: input.layout, data: input.data, headers: { ...listHeaders(ctx.config, { kind: 'send' }), ...input.headers }, fromName: input.fromName, fromEmail: input.fromEmail, trackOpens, trackClicks };
  let message: PreparedMessage;
  try {
    message = await ctx.dispatcher.prepare(`m${row.id}`, spec, { cache: false });
  } catch (err) {
    // the caller hears why (a template that does not render); the row says failed
    await ctx.store.sends.finish([{ id: row.id, status: 'failed', error: String((err as Error).message).slice(0, 500) }], ctx.clock.now());
    throw err;
  }
  const delivery = createDeliveryRun<DeliveryJob>(ctx, { record: (group) => finish(ctx, group) });
  await delivery.send([{ message, send: row, contact, to: liveTo, cc: liveCc, bcc: liveBcc, category }]);
  await delivery.drain();
  return (await ctx.store.sends.getById(row.id))!;
}

async function finish(ctx: Context, group: Delivered<DeliveryJob>[]): Promise<void> {
  await ctx.store.sends.finish(
    group.map((d) => d.outcome),
    ctx.clock.now(),
  );
}

type Field = SuppressedRecipient['field'];

/**
 * Each field's addresses without those whose contact's status `isLeftOut` (by category), and
 * what was left out (recorded on the send row). Each field is checked on its own: a live `to` must
 * never carry a suppressed cc or bcc along.
 */
function leaveOutSuppressed(fields: Record<Field, string[]>, statuses: Map<string, { id: number; status: string }>, category: SendCategory) {
  const dropped: SuppressedRecipient[] = [];
  const live = {} as Record<Field, string[]>;
  for (const field of ['to', 'cc', 'bcc'] as const) {
    live[field] = fields[field].filter((address) => {
      const known = statuses.get(emailKey(address));
      if (!known || !isLeftOut(known.status, category)) return true;
      dropped.push({ field, contact_id: known.id, status: known.status as ContactStatus });
      return false;
    });
  }
  return { live, dropped };
}

function addresses(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const v of list) {
    if (typeof v === 'string' && /[\r\n]/.test(v)) throw new NotifyError('HEADER_INJECTION', `${field} address contains a line break (CR/LF); refused to send`, { field });
    const email = normalizeEmail(v);
    if (!seen.has(emailKey(email))) out.push(email);
    seen.add(emailKey(email));
  }
  return out;
}
