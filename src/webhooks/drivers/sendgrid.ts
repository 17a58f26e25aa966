import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { NotifyError } from '../../errors.ts';
import type { ParsedWebhookEvent, WebhookEventType, WebhookRequest } from '../contract.ts';
import { addressOf, isRecord, str } from '../payload-fields.ts';
import { jsonBody } from '../request-body.ts';
import { ProviderWebhookDriver, reasonTypes } from './provider-driver.ts';

export interface SendGridWebhookDriverOptions {
  /** the Signed Event Webhook's verification key: base64 (as SendGrid shows it) or PEM */
  publicKey: string;
  /** told of `dropped` events whose reason is no bounce or complaint (for logs) */
  onIgnored?: (reason: string) => void;
}

const SIGNATURE = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp';

/**
 * SendGrid sends no bounce or spamreport for an address already on its own suppression lists: it
 * drops the message and says why. These reasons mean the address bounced or complained before.
 */
const DROPPED = reasonTypes({ 'bounced address': 'bounce', invalid: 'bounce', 'spam reporting address': 'complaint' });

/**
 * SendGrid's Signed Event Webhook: an ECDSA P-256 / SHA-256 signature (base64 DER) over the
 * timestamp header followed by the exact body bytes. A batch carries many events; `bounce` is a
 * `bounce` (its `blocked` type a `soft_bounce`), `spamreport` a `complaint`, `dropped` with reason
 * Bounced Address or Invalid a `bounce` and Spam Reporting Address a `complaint`; each event's
 * sg_event_id makes a redelivered batch apply once.
 */
export class SendGridWebhookDriver extends ProviderWebhookDriver {
  readonly name = 'sendgrid';
  private readonly key: KeyObject;

  constructor(options: SendGridWebhookDriverOptions) {
    super(options?.onIgnored);
    this.key = parseKey(options?.publicKey ?? '');
  }

  protected verify(request: WebhookRequest): boolean {
    const signature = request.headers.get(SIGNATURE) ?? '';
    const timestamp = request.headers.get(TIMESTAMP) ?? '';
    if (!/^[A-Za-z0-9+/]{20,200}={0,2}$/.test(signature) || !/^\d{1,12}$/.test(timestamp)) return false;
    try {
      return verify('sha256', Buffer.concat([Buffer.from(timestamp, 'utf8'), request.body]), this.key, Buffer.from(signature, 'base64'));
    } catch {
      return false;
    }
  }

  protected events(request: WebhookRequest): ParsedWebhookEvent[] {
    const body = jsonBody(request);
    if (!Array.isArray(body)) return [];
    const out: ParsedWebhookEvent[] = [];
    for (const e of body.slice(0, 10_000)) {
      if (!isRecord(e)) continue;
      const type = this.typeOf(e);
      const email = addressOf(e.email);
      if (!type || !email) continue;
      const id = str(e.sg_event_id);
      out.push({ type, email, message_id: str(e['smtp-id']) ?? str(e.sg_message_id) ?? '', ...(id ? { id } : {}) });
    }
    return out;
  }

  private typeOf(e: Record<string, unknown>): WebhookEventType | undefined {
    if (e.event === 'bounce') return e.type === 'blocked' ? 'soft_bounce' : 'bounce';
    if (e.event === 'spamreport') return 'complaint';
    if (e.event !== 'dropped') return undefined;
    const reason = str(e.reason)?.trim();
    const type = reason ? DROPPED.get(reason.toLowerCase()) : undefined;
    // Unsubscribed Address, Invalid SMTPAPI header, Spam Content, over quota...: the message was
    // not sent, but nothing says the address is undeliverable or complained.
    if (!type) this.onIgnored(`sendgrid dropped event ${str(e.sg_event_id) ?? '(no sg_event_id)'} (${reason ? reason.slice(0, 100) : 'no reason'}) not applied`);
    return type;
  }
}

function parseKey(value: string): KeyObject {
  let key: KeyObject;
  try {
    const text = value.trim();
    key = text.startsWith('-----BEGIN') ? createPublicKey(text) : createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
  } catch (err) {
    throw new NotifyError('CONFIG_INVALID', "Option 'sendgridWebhookPublicKey' must be the Signed Event Webhook verification key (base64 or PEM)", { option: 'sendgridWebhookPublicKey' }, { cause: err });
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new NotifyError('CONFIG_INVALID', "Option 'sendgridWebhookPublicKey' must be an ECDSA P-256 public key", { option: 'sendgridWebhookPublicKey' });
  }
  return key;
}
