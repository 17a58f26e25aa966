import { createHmac } from 'node:crypto';
import { NotifyError } from '../../errors.ts';
import type { ParsedWebhookEvent, WebhookEventType, WebhookRequest } from '../contract.ts';
import { addressOf, isRecord, safeEqual, str } from '../payload-fields.ts';
import { jsonBody } from '../request-body.ts';
import { ProviderWebhookDriver } from './provider-driver.ts';

export interface MailgunWebhookDriverOptions {
  /** the HTTP webhook signing key (Mailgun: Sending -> Webhooks) */
  signingKey: string;
}

/**
 * Mailgun JSON webhooks: `signature.signature` is the hex HMAC-SHA256 of timestamp + token under
 * the webhook signing key. The token identifies the call, so a replayed or retried call applies
 * once. `failed` with severity permanent is a `bounce`, temporary a `soft_bounce`; `complained`
 * is a `complaint`.
 */
export class MailgunWebhookDriver extends ProviderWebhookDriver {
  readonly name = 'mailgun';
  private readonly signingKey: string;

  constructor(options: MailgunWebhookDriverOptions) {
    super();
    if (!options?.signingKey) throw new NotifyError('CONFIG_INVALID', "Option 'mailgunWebhookSigningKey' must be set for webhookDriver 'mailgun'", { option: 'mailgunWebhookSigningKey' });
    this.signingKey = options.signingKey;
  }

  protected verify(request: WebhookRequest): boolean {
    const sig = signatureOf(request);
    if (!sig) return false;
    const expected = createHmac('sha256', this.signingKey).update(sig.timestamp + sig.token).digest('hex');
    return safeEqual(sig.signature.toLowerCase(), expected);
  }

  protected events(request: WebhookRequest): ParsedWebhookEvent[] {
    const body = jsonBody(request);
    const sig = signatureOf(request);
    if (!isRecord(body) || !sig || !isRecord(body['event-data'])) return [];
    const data = body['event-data'];
    let type: WebhookEventType | undefined;
    if (data.event === 'failed') type = data.severity === 'permanent' ? 'bounce' : data.severity === 'temporary' ? 'soft_bounce' : undefined;
    else if (data.event === 'complained') type = 'complaint';
    const email = addressOf(data.recipient);
    if (!type || !email) return [];
    const message = isRecord(data.message) ? data.message : {};
    const headers = isRecord(message.headers) ? message.headers : {};
    return [{ type, email, message_id: str(headers['message-id']) ?? '', id: `token:${sig.token}` }];
  }
}

function signatureOf(request: WebhookRequest): { timestamp: string; token: string; signature: string } | undefined {
  const body = jsonBody(request);
  const s = isRecord(body) && isRecord(body.signature) ? body.signature : undefined;
  if (!s) return undefined;
  const timestamp = typeof s.timestamp === 'number' ? String(s.timestamp) : s.timestamp;
  const token = s.token;
  const signature = s.signature;
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) return undefined;
  if (typeof token !== 'string' || !/^[A-Za-z0-9]{10,200}$/.test(token)) return undefined;
  if (typeof signature !== 'string' || !/^[0-9a-fA-F]{64}$/.test(signature)) return undefined;
  return { timestamp, token, signature };
}
