import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { NotifyError } from '../../errors.ts';
import type { ParsedWebhookEvent, WebhookEventType, WebhookRequest } from '../contract.ts';
import { addressOf, isRecord, jsonBody, str } from '../util.ts';
import { ProviderWebhookDriver } from './provider-driver.ts';

export interface SendGridWebhookDriverOptions {
  /** the Signed Event Webhook's verification key: base64 (as SendGrid shows it) or PEM */
  publicKey: string;
}

const SIGNATURE = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp';

/**
 * SendGrid's Signed Event Webhook: an ECDSA P-256 / SHA-256 signature (base64 DER) over the
 * timestamp header followed by the exact body bytes. A batch carries many events; `bounce` is a
 * `bounce` (its `blocked` type a `soft_bounce`), `spamreport` a `complaint`; each event's
 * sg_event_id makes a redelivered batch apply once.
 */
export class SendGridWebhookDriver extends ProviderWebhookDriver {
  readonly name = 'sendgrid';
  private readonly key: KeyObject;

  constructor(options: SendGridWebhookDriverOptions) {
    super();
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
      let type: WebhookEventType | undefined;
      if (e.event === 'bounce') type = e.type === 'blocked' ? 'soft_bounce' : 'bounce';
      else if (e.event === 'spamreport') type = 'complaint';
      const email = addressOf(e.email);
      if (!type || !email) continue;
      const id = str(e.sg_event_id);
      out.push({ type, email, message_id: str(e['smtp-id']) ?? str(e.sg_message_id) ?? '', ...(id ? { id } : {}) });
    }
    return out;
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
