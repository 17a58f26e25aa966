import { createHash } from 'node:crypto';
import { trackingHost } from '../config.ts';
import type { Context } from '../context.ts';
import { isNotifyError, NotifyError } from '../errors.ts';
import type { Mailer, OutgoingMessage } from '../mail/contract.ts';
import { createMailer } from '../mail/index.ts';
import { assembleInto, type Framing, framing, headerBlock } from '../mail/mime.ts';
import { addressOf } from '../mail/smtp.ts';
import { type CompiledMessage, compileMessage, createEngines, type Engines, type MessageTemplate } from '../render/compile.ts';
import { encodeValues, joinParts, type Personalized, personalize, pushEncoded, type Recipient } from '../render/personalize.ts';
import { assertHeaderValue, checkHeaders, checkSubject, formatFrom, hasHeader } from './headers.ts';
import { type LinkScope, scopeSignature } from './links.ts';
import { storeScopeLinks } from './scope-links.ts';
import type { SendOutcome } from './storage/sends.ts';
import { isSuppressedStatus, type RecipientContact } from './types.ts';

/** A message as a campaign, drip step or one-off describes it. */
export interface MessageSpec extends MessageTemplate {
  fromName?: string | null;
  fromEmail?: string | null;
  headers?: Record<string, string> | null;
}

/** A message compiled for one scope (c<campaignId>, s<stepId>, m<sendId>), ready for any number of recipients. */
export interface PreparedMessage {
  readonly scope: LinkScope;
  readonly compiled: CompiledMessage;
  readonly from: string;
  readonly headers: Readonly<Record<string, string>>;
  /** the caller set its own List-Unsubscribe: notify adds neither header */
  readonly ownListUnsubscribe: boolean;
  readonly framing: Framing;
}

export interface DeliveryTarget {
  /** the pre-created send row (status `sending`) */
  send: { id: number; token: string };
  /** the single contact the message is for; gives `contact` to Liquid and the unsubscribe URL */
  contact?: RecipientContact | null;
  /** default: [contact.email] */
  to?: string[];
  cc?: string[];
  bcc?: string[];
}

export interface Dispatcher {
  readonly mailer: Mailer;
  /**
   * compiles once per scope and content, storing the scope's link list; memoised unless
   * `cache: false` (one-off sends, whose scope is never seen again)
   */
  prepare(scope: LinkScope, spec: MessageSpec, opts?: { cache?: boolean }): Promise<PreparedMessage>;
  /**
   * Renders and delivers one message. Never throws for a failed delivery: the outcome says
   * `failed` (mailer returned false or threw, header injection in a rendered subject) or
   * `suppressed` (the contact is unsubscribed, bounced or complained). Writes nothing to the store:
   * the caller records outcomes, in batches (store.sends.finish).
   */
  deliver(message: PreparedMessage, target: DeliveryTarget): Promise<SendOutcome>;
  close(): Promise<void>;
}

const PREPARED_CACHE = 64;
const dispatchers = new WeakMap<Context, Dispatcher>();

/** The instance's dispatcher (one mailer, one compile cache), created on first use. */
export function dispatcherFor(ctx: Context): Dispatcher {
  let d = dispatchers.get(ctx);
  if (!d) {
    d = createDispatcher(ctx);
    dispatchers.set(ctx, d);
  }
  return d;
}

export async function closeDispatcher(ctx: Context): Promise<void> {
  const d = dispatchers.get(ctx);
  dispatchers.delete(ctx);
  await d?.close();
}

export function createDispatcher(ctx: Context, mailer?: Mailer): Dispatcher {
  const { config } = ctx;
  let theMailer = mailer;
  const getMailer = () => (theMailer ??= createMailer(config, ctx.log, { fetch: ctx.fetch }));
  const engines: Engines = createEngines();
  const host = trackingHost(config);
  const cache = new Map<string, Promise<PreparedMessage>>();

  const prepare = async (scope: LinkScope, spec: MessageSpec): Promise<PreparedMessage> => {
    const subject = checkSubject(spec.subject);
    const from = formatFrom(spec.fromName ?? config.fromName, spec.fromEmail || config.fromEmail);
    const headers = checkHeaders(spec.headers);
    const compiled = await compileMessage(
      {
        markdownPath: config.markdownPath,
        viewsPath: config.viewsPath,
        defaultLayout: config.defaultLayout,
        host,
        engines,
        storeLinks: (s, urls) => storeScopeLinks(ctx, s, urls),
      },
      scope,
      { ...spec, subject },
    );
    return { scope, compiled, from: from.header, headers, ownListUnsubscribe: hasHeader(headers, 'List-Unsubscribe'), framing: framing(compiled.hasHtml) };
  };

  return {
    get mailer() {
      return getMailer();
    },
    prepare(scope, spec, opts = {}) {
      if (opts.cache === false) return prepare(scope, spec);
      const key = `${scope}:${createHash('sha256').update(JSON.stringify(spec)).digest('base64url')}`;
      let p = cache.get(key);
      if (!p) {
        if (cache.size >= PREPARED_CACHE) cache.delete(cache.keys().next().value!);
        p = prepare(scope, spec);
        cache.set(key, p);
        p.catch(() => cache.delete(key));
      }
      return p;
    },
    async deliver(message, target) {
      const { send, contact } = target;
      if (contact && isSuppressedStatus(contact.status)) return { id: send.id, status: 'suppressed' };
      try {
        const out = await render(ctx, host, message, target);
        const result = await getMailer().send(out);
        if (result === false) return { id: send.id, status: 'failed', error: 'mailer returned false' };
        const messageId = (typeof result === 'object' && result?.messageId) || out.messageId || null;
        return { id: send.id, status: 'sent', message_id: messageId };
      } catch (err) {
        if (!isNotifyError(err)) ctx.log.warn({ err, sendId: send.id }, 'delivery failed');
        const reason = isNotifyError(err) ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err);
        return { id: send.id, status: 'failed', error: reason.slice(0, 500) };
      }
    },
    async close() {
      await theMailer?.close?.();
    },
  };
}

/** Contact fields Liquid may print as `{{ contact.* }}`. */
export function contactVars(c: RecipientContact): Record<string, unknown> {
  return { id: c.id, email: c.email, name: c.name ?? '', attributes: c.attributes ?? {} };
}

/**
 * Everything a delivery does except calling the mailer: per-recipient values, headers and the
 * complete MIME message (exported for benchmarks and tests).
 */
export async function renderOutgoing(ctx: Pick<Context, 'config' | 'secret' | 'clock'>, message: PreparedMessage, target: DeliveryTarget): Promise<OutgoingMessage> {
  return render(ctx, trackingHost(ctx.config), message, target);
}

async function render(ctx: Pick<Context, 'secret' | 'clock'>, host: string, message: PreparedMessage, target: DeliveryTarget): Promise<OutgoingMessage> {
  const { send, contact } = target;
  const to = target.to ?? (contact ? [contact.email] : []);
  const cc = target.cc ?? [];
  const bcc = target.bcc ?? [];
  if (to.length + cc.length + bcc.length === 0) throw new NotifyError('INVALID_INPUT', 'A message needs at least one recipient', { sendId: send.id });
  const single = to.length + cc.length + bcc.length === 1 && !!contact;
  const recipient: Recipient = {
    token: send.token,
    sig: scopeSignature(ctx.secret, send.token, message.scope),
    unsubscribeUrl: single ? `${host}/notify/unsubscribe/${contact!.unsubscribe_token}?s=${send.token}` : '',
    contact: contact ? contactVars(contact) : undefined,
  };
  const p = await personalize(message.compiled, recipient);
  assertHeaderValue('subject', p.subject);
  const headers: Record<string, string> = { ...message.headers };
  if (single && !message.ownListUnsubscribe) {
    headers['List-Unsubscribe'] = `<${recipient.unsubscribeUrl}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  const messageId = `<${send.token}@${domainOf(message.from)}>`;
  const head = headerBlock({ from: message.from, to, cc, subject: p.subject, date: ctx.clock.now(), messageId, headers });
  const textValues = encodeValues(recipient, p.textValues);
  const html = p.variant.html;
  const raw = assembleInto(
    head,
    message.framing,
    (list) => pushEncoded(list, p.variant.text, textValues),
    html && ((list) => pushEncoded(list, html, p.htmlValues === p.textValues ? textValues : encodeValues(recipient, p.htmlValues, textValues))),
  );
  return outgoing(message, p, { to, cc, bcc, headers, messageId, raw });
}

/** html and text are joined only if a custom mailer reads them; the built-in ones send `raw`. */
function outgoing(message: PreparedMessage, p: Personalized, m: Pick<OutgoingMessage, 'to' | 'cc' | 'bcc' | 'headers' | 'messageId' | 'raw'>): OutgoingMessage {
  let html: string | undefined;
  let text: string | undefined;
  return {
    from: message.from,
    subject: p.subject,
    sendToken: p.recipient.token,
    ...m,
    get html() {
      if (html === undefined && p.variant.html) html = joinParts(p.variant.html, p.recipient, p.htmlValues);
      return html;
    },
    get text() {
      return (text ??= joinParts(p.variant.text, p.recipient, p.textValues));
    },
  };
}

function domainOf(from: string): string {
  const addr = addressOf(from);
  return addr.slice(addr.lastIndexOf('@') + 1) || 'notify';
}
