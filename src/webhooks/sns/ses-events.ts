import type { ParsedWebhookEvent, WebhookEventType } from '../contract.ts';
import { addressOf, isRecord, str } from '../payload-fields.ts';

/**
 * Bounce and complaint events from the Message of an SES notification: the feedback form
 * (`notificationType`) and the event-publishing form (`eventType`) carry the same objects.
 * Permanent bounces are `bounce`; Transient and Undetermined are `soft_bounce`. A complaint
 * whose feedback type says `not-spam` is no complaint. Anything else yields nothing.
 */
export function sesEvents(message: string, snsMessageId: string): ParsedWebhookEvent[] {
  let body: unknown;
  try {
    body = JSON.parse(message);
  } catch {
    return [];
  }
  if (!isRecord(body)) return [];
  const kind = str(body.notificationType) ?? str(body.eventType);
  const mail = isRecord(body.mail) ? body.mail : {};
  const messageId = str(mail.messageId) ?? '';
  let type: WebhookEventType;
  let recipients: unknown;
  if (kind === 'Bounce' && isRecord(body.bounce)) {
    type = body.bounce.bounceType === 'Permanent' ? 'bounce' : 'soft_bounce';
    recipients = body.bounce.bouncedRecipients;
  } else if (kind === 'Complaint' && isRecord(body.complaint)) {
    if (body.complaint.complaintFeedbackType === 'not-spam') return [];
    type = 'complaint';
    recipients = body.complaint.complainedRecipients;
  } else return [];
  if (!Array.isArray(recipients)) return [];
  const out: ParsedWebhookEvent[] = [];
  for (const r of recipients.slice(0, 1000)) {
    const email = isRecord(r) ? addressOf(r.emailAddress) : undefined;
    if (email) out.push({ type, email, message_id: messageId, id: `${snsMessageId}:${email.toLowerCase()}` });
  }
  return out;
}
