import { NotifyError } from '../../errors.ts';
import type { ParsedWebhookEvent, WebhookEventType, WebhookRequest } from '../contract.ts';
import { addressOf, isRecord, safeEqual, str } from '../payload-fields.ts';
import { jsonBody } from '../request-body.ts';
import { ProviderWebhookDriver, reasonTypes } from './provider-driver.ts';

export interface PostmarkWebhookDriverOptions {
  /** the HTTP Basic user set in the webhook's settings (Postmark: Webhooks -> Basic auth credentials) */
  username: string;
  password: string;
  /** told of SubscriptionChange records that are not applied (manual suppressions, reactivations) */
  onIgnored?: (reason: string) => void;
}

const HARD = new Set(['HardBounce', 'BadEmailAddress']);
const SOFT = new Set(['Transient', 'SoftBounce', 'DnsError', 'Blocked', 'Unknown']);
/** Why Postmark stopped sending to an address, when that is a reason for notify to stop too. */
const SUPPRESSION = reasonTypes({ HardBounce: 'bounce', SpamComplaint: 'complaint' });

/**
 * Postmark bounce and spam-complaint webhooks. Postmark does not sign webhook requests; it sends
 * the HTTP Basic credentials configured on the webhook (`https://user:pass@host/notify/webhook`,
 * or the webhook's HttpAuth setting), so those are what is verified (constant-time compare).
 * HardBounce and BadEmailAddress are `bounce`; Transient, SoftBounce, DnsError, Blocked and
 * Unknown are `soft_bounce`; SpamComplaint is `complaint`. On Broadcast streams Postmark reports
 * hard bounces and spam complaints only as SubscriptionChange records: SuppressSending with
 * SuppressionReason HardBounce is a `bounce`, SpamComplaint a `complaint`. Other record types are
 * left out.
 */
export class PostmarkWebhookDriver extends ProviderWebhookDriver {
  readonly name = 'postmark';
  private readonly expected: string;

  constructor(options: PostmarkWebhookDriverOptions) {
    super(options?.onIgnored);
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
    if (body.RecordType === 'SubscriptionChange') return this.subscriptionChange(body);
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

  /**
   * Only a suppression for a hard bounce or a spam complaint says the address is undeliverable
   * or complained. ManualSuppression is also what a recipient's unsubscribe through Postmark's own
   * link becomes, and what a sender's manual block is: neither is a bounce or a complaint, and an
   * unsubscribe reaches notify through its own List-Unsubscribe and links. A reactivation
   * (SuppressSending false) is never applied either: only an explicit API call or a confirmed
   * opt-in lifts a suppression in notify, not the provider's list changing.
   */
  private subscriptionChange(body: Record<string, unknown>): ParsedWebhookEvent[] {
    const reason = str(body.SuppressionReason);
    const type = body.SuppressSending === true && reason ? SUPPRESSION.get(reason) : undefined;
    if (!type) {
      const what = body.SuppressSending === false ? 'reactivation' : `SuppressSending ${JSON.stringify(body.SuppressSending)?.slice(0, 20)}, reason ${reason?.slice(0, 40) ?? 'none'}`;
      this.onIgnored(`postmark SubscriptionChange (${what}) at ${str(body.ChangedAt)?.slice(0, 40) ?? 'unknown time'} not applied`);
      return [];
    }
    const email = addressOf(body.Recipient);
    if (!email) return [];
    const at = str(body.ChangedAt);
    return [{ type, email, message_id: str(body.MessageID) ?? '', ...(at ? { id: `SubscriptionChange:${at}:${email.toLowerCase()}` } : {}) }];
  }
}
