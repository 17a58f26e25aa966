import { emailKey } from '../core/email.ts';
import type { ParsedWebhookEvent, WebhookEventType } from '../webhooks/contract.ts';
import type { BounceReport, DeliveryRecipient } from './report.ts';
import { verpToken } from './verp.ts';

/** What the mailbox needs to know of the send a token names. */
export interface SendRef {
  to_email: string;
  /** the Message-ID the mailer reported; the webhook path attributes events to the send by it */
  message_id: string | null;
}

export interface ReportOutcome {
  /** events to apply, in the webhook events' shape */
  events: ParsedWebhookEvent[];
  /** recipients the report names that the send did not go to: logged, never applied */
  mismatched: string[];
  /** recipients read that call for no event (delivered, relayed, expanded; a feedback type other than abuse) */
  ignored: string[];
}

/**
 * The send token of a report: first where the report was delivered to (a DSN goes to the envelope
 * sender, so Delivered-To / X-Original-To / Envelope-To / To hold our VERP address), then the
 * feedback report's Original-Mail-From, then the returned original's Return-Path (feedback loops
 * write to the address registered with them, not to the return path).
 */
export function reportToken(report: BounceReport, bounceDomain: string): string | undefined {
  const h = report.headers;
  const candidates = [
    ...(h.get('delivered-to') ?? []),
    ...(h.get('x-original-to') ?? []),
    ...(h.get('envelope-to') ?? []),
    ...(h.get('to') ?? []),
    report.feedback?.originalMailFrom,
    ...(report.original.get('return-path') ?? []),
  ];
  for (const value of candidates) {
    const token = verpToken(value, bounceDomain);
    if (token) return token;
  }
  return undefined;
}

/**
 * The events a report means for the send its token names. A recipient the report names is applied
 * only when it is the address that send went to: a VERP token proves which send bounced, not that a
 * third-party report about someone else is true. `receiptId` (the report's Message-ID) makes each
 * event's id stable, so reading the same report again applies nothing twice.
 */
export function reportEvents(report: BounceReport, send: SendRef, receiptId: string): ReportOutcome {
  const out: ReportOutcome = { events: [], mismatched: [], ignored: [] };
  const sent = emailKey(send.to_email);
  const add = (type: WebhookEventType) => {
    const id = `${receiptId}:${sent}:${type}`;
    if (!out.events.some((e) => e.id === id)) out.events.push({ type, email: send.to_email, message_id: send.message_id ?? '', id });
  };
  if (report.feedback) {
    const named = report.feedback.originalRcptTo;
    // Many feedback loops redact the recipient; then the token alone names the send.
    if (named.length > 0 && !named.some((a) => emailKey(a) === sent)) out.mismatched.push(...named);
    else if (report.feedback.type === 'abuse') add('complaint');
    else out.ignored.push(`${send.to_email}: feedback type ${report.feedback.type}`);
    return out;
  }
  for (const r of report.recipients) {
    const addresses = [r.final, r.original].filter((a): a is string => a !== undefined);
    if (!addresses.some((a) => emailKey(a) === sent)) {
      out.mismatched.push(addresses[0] ?? '(no rfc822 address)');
      continue;
    }
    const type = deliveryEventType(r);
    if (type) add(type);
    else out.ignored.push(`${send.to_email}: action ${r.action || '(none)'}`);
  }
  return out;
}

/** failed + 5.x.x is a bounce; failed + 4.x.x or delayed is a soft bounce; the rest is no event. */
export function deliveryEventType(r: Pick<DeliveryRecipient, 'action' | 'status'>): WebhookEventType | undefined {
  if (r.action === 'delayed') return 'soft_bounce';
  if (r.action !== 'failed') return undefined;
  return r.status?.startsWith('4') ? 'soft_bounce' : 'bounce';
}
