import { createHash } from 'node:crypto';
import { trackingHost } from '../config.ts';
import type { Context } from '../context.ts';
import { isLeftOut, type SendCategory } from './categories.ts';
import { isNotifyError, NotifyError } from '../errors.ts';
import { type CompiledMessage, compileMessage, createEngines, type MessageTemplate } from '../render/compile.ts';
import { personalize, type Recipient } from '../render/personalize.ts';
import { classifyFailure, REFUSED } from './failure.ts';
import { listUnsubscribeHeaders } from './list-headers.ts';
import { assertHeaderValue, checkHeaders, checkSubject, formatFrom, hasHeader } from './headers.ts';
import { type LinkScope, scopeSignature } from './link-refs.ts';
import { storeScopeLinks } from './link-lists.ts';
import { type ComposerFactory, heldBack, type Mailer, type MailResult, type MessageComposer, type OutgoingMessage } from './mailer.ts';
import { createSendTurns, DEFAULT_CONCURRENCY, type SendTurns } from './send-turns.ts';
import type { SendOutcome } from './storage/sends.ts';
import type { RecipientContact } from './types.ts';

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
  readonly compose: MessageComposer;
}

export interface DeliveryTarget {
  /** the pre-created send row (status `sending`) */
  send: { id: number; token: string };
  /** the single contact the message is for; gives `contact` to Liquid and the unsubscribe URL */
  contact?: RecipientContact | null;
  /** default `marketing`; `transactional` reaches an unsubscribed contact and has no List-Unsubscribe headers */
  category?: SendCategory;
  /** default: [contact.email] */
  to?: string[];
  cc?: string[];
  bcc?: string[];
}

export interface Dispatcher {
  /**
   * compiles once per scope and content, storing the scope's link list; memoised unless
   * `cache: false` (one-off sends, whose scope is never seen again)
   */
  prepare(scope: LinkScope, spec: MessageSpec, opts?: { cache?: boolean }): Promise<PreparedMessage>;
  /**
   * Renders and delivers one message through the instance's mailer. Never throws for a failed
   * delivery: the outcome says `failed` (the mailer returned false or threw, header injection in a
   * rendered subject; `transient` when trying again later may succeed) or `suppressed` (the
   * contact is unsubscribed, bounced or complained). Writes nothing to the store: the caller
   * records outcomes. With `ready`, the message cannot leave before it resolves true (the send
   * committed as started); rendering and what the mailer can do before then overlap the wait, and
   * `false` holds the message back (an outcome the caller drops).
   */
  deliver(message: PreparedMessage, target: DeliveryTarget, ready?: Promise<boolean>): Promise<SendOutcome>;
  /** how many deliveries the mailer carries at once (an SMTP pool's connections) */
  readonly concurrency: number | undefined;
  /** the instance's turns to start a send and hand it to the mailer, shared by all its runs (send-turns.ts) */
  readonly turns: SendTurns;
  /** everything a delivery does except calling the mailer (benchmarks and tests) */
  render(message: PreparedMessage, target: DeliveryTarget): Promise<OutgoingMessage>;
}

export type DispatchContext = Pick<Context, 'config' | 'store' | 'clock' | 'secret' | 'log' | 'mailer'>;

const PREPARED_CACHE = 64;

/** Built once per instance by notify.ts: one mailer, one compile cache. */
export function createDispatcher(ctx: DispatchContext, composerFor: ComposerFactory): Dispatcher {
  const { config } = ctx;
  const engines = createEngines();
  const host = trackingHost(config);
  const cache = new Map<string, Promise<PreparedMessage>>();

  const prepare = async (scope: LinkScope, spec: MessageSpec): Promise<PreparedMessage> => {
    const subject = checkSubject(spec.subject);
    const from = formatFrom(spec.fromName ?? config.fromName, spec.fromEmail || config.fromEmail);
    const headers = checkHeaders(spec.headers);
    const env = { markdownPath: config.markdownPath, viewsPath: config.viewsPath, defaultLayout: config.defaultLayout, host, engines, storeLinks: (s: string, urls: string[]) => storeScopeLinks(ctx, s, urls) };
    // a message's own choice wins; unset (or null from a stored campaign) means the configured default
    const track = { trackOpens: spec.trackOpens ?? config.trackOpens, trackClicks: spec.trackClicks ?? config.trackClicks };
    const compiled = await compileMessage(env, scope, { ...spec, subject, ...track });
    return { scope, compiled, from: from.header, headers, ownListUnsubscribe: hasHeader(headers, 'List-Unsubscribe'), compose: composerFor(compiled.hasHtml) };
  };
  const render = (message: PreparedMessage, target: DeliveryTarget) => renderFor(ctx, host, message, target);

  return {
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
    async deliver(message, target, ready) {
      const { send, contact } = target;
      if (contact && isLeftOut(contact.status, target.category)) return { id: send.id, status: 'suppressed' };
      try {
        const out = await render(message, target);
        const result = await mail(ctx.mailer, out, ready);
        if (result === false) return { id: send.id, status: 'failed', error: REFUSED.reason, transient: REFUSED.transient, final: REFUSED.final };
        const messageId = (typeof result === 'object' && result?.messageId) || out.messageId || null;
        return { id: send.id, status: 'sent', message_id: messageId };
      } catch (err) {
        const failure = classifyFailure(err);
        if (!isNotifyError(err)) ctx.log.warn({ err, sendId: send.id, transient: failure.transient }, 'delivery failed');
        return { id: send.id, status: 'failed', error: failure.reason, transient: failure.transient, final: failure.final };
      }
    },
    render,
    concurrency: ctx.mailer.concurrency,
    turns: createSendTurns(ctx.mailer.concurrency ?? DEFAULT_CONCURRENCY),
  };
}

/** a mailer that cannot hold a message back until `ready` gets it only once `ready` said true */
async function mail(mailer: Mailer, out: OutgoingMessage, ready: Promise<boolean> | undefined): Promise<MailResult | boolean> {
  if (!ready) return mailer.send(out);
  // a failed start write is the run's failure (the caller awaits `ready`), not this delivery's: not logged as one
  let startFailed = false;
  ready.catch(() => {
    startFailed = true;
  });
  try {
    if (mailer.sendWhen) return await mailer.sendWhen(out, ready);
    if (!(await ready)) throw heldBack();
    return await mailer.send(out);
  } catch (err) {
    if (startFailed) throw heldBack(err);
    throw err;
  }
}

/** Contact fields Liquid may print as `{{ contact.* }}`. */
export function contactVars(c: RecipientContact): Record<string, unknown> {
  return { id: c.id, email: c.email, name: c.name ?? '', attributes: c.attributes ?? {} };
}

/** Per-recipient values and headers, then the mail layer's composer builds the message. */
async function renderFor(ctx: Pick<Context, 'secret' | 'clock'>, host: string, message: PreparedMessage, target: DeliveryTarget): Promise<OutgoingMessage> {
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
    preferencesUrl: single ? `${host}/notify/preferences/${contact!.unsubscribe_token}` : '',
    contact: contact ? contactVars(contact) : undefined,
  };
  const content = await personalize(message.compiled, recipient);
  assertHeaderValue('subject', content.subject);
  const headers: Record<string, string> = { ...message.headers };
  if (single && !message.ownListUnsubscribe && target.category !== 'transactional') {
    Object.assign(headers, listUnsubscribeHeaders(host, ctx.secret, send.id, recipient.unsubscribeUrl));
  }
  return message.compose({ from: message.from, to, cc, bcc, subject: content.subject, date: ctx.clock.now(), headers, sendToken: send.token, content });
}
