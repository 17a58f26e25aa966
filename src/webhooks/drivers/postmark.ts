import { NotifyError } from '../../errors.ts';
import type { ParsedWebhookEvent, WebhookEventType, WebhookRequest } from '../contract.ts';
import { addressOf, isRecord, jsonBody, safeEqual, str } from '../util.ts';
import { ProviderWebhookDriver } from './provider-driver.ts';

export interface PostmarkWebhookDriverOptions {
  /** the HTTP Basic user set in the webhook's settings (Postmark: Webhooks -> Basic auth credentials) */
  username: string;
  password: string;
}

const HARD = new Set(['HardBounce', 'BadEmailAddress']);
const SOFT = new Set(['Transient', 'SoftBounce', 'DnsError', 'Blocked', 'Unknown']);

/**
 * Postmark bounce and spam-complaint webhooks. Postmark does not sign webhook requests; it sends
 * the HTTP Basic credentials configured on the webhook (`https://user:pass@host/notify/webhook`,
 * or the webhook's HttpAuth setting), so those are what is verified (constant-time compare).
 * HardBounce and BadEmailAddress are `bounce`; Transient, SoftBounce, DnsError, Blocked and
 * Unknown are `soft_bounce`; SpamComplaint is `complaint`; other record types are left out.
 */
export class PostmarkWebhookDriver extends ProviderWebhookDriver {
  readonly name = 'postmark';
  private readonly expected: string;

  constructor(options: PostmarkWebhookDriverOptions) {
    super();
    if (!options?.username || !options.password || options.username.includes(':')) {
      throw new NotifyError('CONFIG_INVALID', "Option 'postmarkWebhookUsername' and 'postmarkWebhookPassword' must be set (no ':' in the user) for webhookDriver 'postmark'", { option: 'postmarkWebhookUsername' });
    }
    this.expected = `Basic ${Buffer.from(`${options.username}:${options.password}`, 'utf8').toString('base64')}`;
  }

  protected verify(request: WebhookRequest): boolean {
    const given = request.headers.get('authorization') ?? '';
    return safeEqual(given.replace(/^basic /i, 'Basic '), this.expected);
  }

  protected events(request: WebhookRequest): ParsedWebhookEvent[] {
    const body = jsonBody(request);
    if (!isRecord(body)) return [];
    const record = str(body.RecordType);
    const kind = str(body.Type);
    let type: WebhookEventType | undefined;
    if (record === 'SpamComplaint' || kind === 'SpamComplaint') type = 'complaint';
    else if (record === 'Bounce' || record === undefined) type = kind && HARD.has(kind) ? 'bounce' : kind && SOFT.has(kind) ? 'soft_bounce' : undefined;
    const email = addressOf(body.Email);
    if (!type || !email) return [];
    const id = typeof body.ID === 'number' || typeof body.ID === 'string' ? `${record ?? 'Bounce'}:${body.ID}` : undefined;
    return [{ type, email, message_id: str(body.MessageID) ?? '', ...(id ? { id } : {}) }];
  }
}
