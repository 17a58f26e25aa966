import type { ParsedMail } from 'mailparser';
import { NotifyError } from '../errors.ts';
import { type Fields, fieldAddress, firstField, parseFieldBlocks, parseFields } from './fields.ts';
import { originalHeaderBlock } from './report-parts.ts';

/** One per-recipient block of an RFC 3464 delivery-status part. */
export interface DeliveryRecipient {
  /** Final-Recipient's address (undefined when it is not an rfc822 address) */
  final: string | undefined;
  /** Original-Recipient's address, when the MTA kept the address as it was given */
  original: string | undefined;
  /** lower-case: failed, delayed, delivered, relayed, expanded */
  action: string;
  /** the enhanced status code (`5.1.1`), without the comment some MTAs add */
  status: string | undefined;
  diagnostic: string | undefined;
}

/** An RFC 5965 feedback-report part. */
export interface FeedbackReport {
  /** lower-case: abuse, fraud, virus, other, not-spam, auth-failure ... */
  type: string;
  originalMailFrom: string | undefined;
  originalRcptTo: string[];
}

export interface BounceReport {
  kind: 'delivery-status' | 'feedback-report';
  /** the report's own Message-ID (without angle brackets), when it has one */
  messageId: string | undefined;
  /** the report's headers (Delivered-To, X-Original-To, Envelope-To, To ... name its envelope recipient) */
  headers: Fields;
  /** headers of the returned original message (message/rfc822 or text/rfc822-headers part), possibly empty */
  original: Fields;
  recipients: DeliveryRecipient[];
  feedback: FeedbackReport | undefined;
}

const REPORT_TYPES = new Set(['delivery-status', 'feedback-report']);

/**
 * Reads a delivery status notification (RFC 3464 in an RFC 6522 multipart/report) or an abuse
 * feedback report (RFC 5965). Anything else, or a report without its machine-readable part, is
 * NotifyError INVALID_INPUT naming what is missing: such a message is left for a person to read.
 */
export async function parseReport(raw: Buffer | string): Promise<BounceReport> {
  const source = typeof raw === 'string' ? Buffer.from(raw) : raw;
  // Loaded here, not at start-up: most CLI commands never parse a report.
  const { simpleParser } = await import('mailparser');
  let mail: ParsedMail;
  try {
    // keepDeliveryStatus: the delivery-status part as an attachment, not folded into the text.
    mail = await simpleParser(source, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  } catch (err) {
    throw new NotifyError('INVALID_INPUT', `Message could not be parsed: ${(err as Error).message}`, undefined, { cause: err });
  }
  const contentType = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const reportType = contentType?.params?.['report-type']?.toLowerCase();
  if (contentType?.value?.toLowerCase() !== 'multipart/report' || !reportType || !REPORT_TYPES.has(reportType)) {
    throw new NotifyError('INVALID_INPUT', `Not a delivery status notification or feedback report (Content-Type ${contentType?.value ?? 'none'}${reportType ? `; report-type=${reportType}` : ''})`);
  }
  const kind = reportType as BounceReport['kind'];
  const headers = parseFields(mail.headerLines.map((h) => h.line).join('\n'));
  const boundary = contentType.params?.boundary;
  const original = parseFields(boundary ? originalHeaderBlock(source, boundary) : '');
  const messageId = mail.messageId?.replace(/^<|>$/g, '') || undefined;
  const part = (type: string) => mail.attachments.find((a) => a.contentType.toLowerCase() === type)?.content.toString('utf8');
  if (kind === 'delivery-status') {
    const text = part('message/delivery-status') ?? part('message/global-delivery-status');
    if (text === undefined) throw new NotifyError('INVALID_INPUT', 'Delivery status notification without a message/delivery-status part');
    return { kind, messageId, headers, original, recipients: deliveryRecipients(text), feedback: undefined };
  }
  const text = part('message/feedback-report');
  if (text === undefined) throw new NotifyError('INVALID_INPUT', 'Feedback report without a message/feedback-report part');
  return { kind, messageId, headers, original, recipients: [], feedback: feedbackReport(text) };
}

/** The per-recipient blocks (the first block is per-message: Reporting-MTA, Arrival-Date ...). */
function deliveryRecipients(text: string): DeliveryRecipient[] {
  const out: DeliveryRecipient[] = [];
  for (const block of parseFieldBlocks(text)) {
    const final = firstField(block, 'final-recipient');
    const action = firstField(block, 'action');
    if (final === undefined && action === undefined) continue;
    out.push({
      final: fieldAddress(final),
      original: fieldAddress(firstField(block, 'original-recipient')),
      action: (action ?? '').trim().toLowerCase(),
      status: /^\s*([245]\.\d{1,3}\.\d{1,3})\b/.exec(firstField(block, 'status') ?? '')?.[1],
      diagnostic: firstField(block, 'diagnostic-code'),
    });
  }
  return out;
}

function feedbackReport(text: string): FeedbackReport {
  const fields = parseFields(text);
  const type = firstField(fields, 'feedback-type');
  if (!type) throw new NotifyError('INVALID_INPUT', 'Feedback report without a Feedback-Type');
  return {
    type: type.trim().toLowerCase(),
    originalMailFrom: firstField(fields, 'original-mail-from'),
    originalRcptTo: (fields.get('original-rcpt-to') ?? []).map((v) => fieldAddress(v)).filter((a): a is string => a !== undefined),
  };
}
