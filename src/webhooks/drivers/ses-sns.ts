import { verify } from 'node:crypto';
import { NotifyError } from '../../errors.ts';
import type { ParsedWebhookEvent, WebhookDriverInterface, WebhookRequest } from '../contract.ts';
import { isTrustedCertUrl, SigningCertificates } from '../sns/certificates.ts';
import { parseTopicArn, type SnsMessage, snsHost, snsMessage, stringToSign } from '../sns/message.ts';
import { sesEvents } from '../sns/ses-events.ts';
import { type IncomingWebhook, webhookRequestOf, withRequest } from '../request-body.ts';

export interface SesSnsWebhookDriverOptions {
  /** TopicArn allowlist, checked before confirming or processing; empty or absent = any topic */
  topicArns?: readonly string[];
  /** for signing certificates and subscription confirmations (default: global fetch) */
  fetch?: typeof fetch;
  /** time source for the timestamp window and certificate validity (default: the system clock) */
  now?: () => Date;
  /** how old a message may be (SNS Timestamp); default 1 hour */
  maxAgeMs?: number;
  /** signing certificates kept in memory; default 16 */
  certificateCacheSize?: number;
  /** told why a request was refused (for logs); never sees secrets */
  onReject?: (reason: string) => void;
}

const FUTURE_SKEW_MS = 5 * 60_000;
const BASE64 = /^[A-Za-z0-9+/]{40,2048}={0,2}$/;
const TOKEN = /^[A-Za-z0-9._~-]{1,4096}$/;

/**
 * Amazon SES bounce and complaint notifications delivered by an Amazon SNS HTTP(S) subscription.
 * Every message is checked before anything else looks at it: an SNS envelope (raw delivery is
 * refused, it is unsigned), an allowed TopicArn, a Timestamp inside the window, a signing
 * certificate URL at the topic region's SNS host, and an RSA signature (SignatureVersion 1 =
 * SHA1, 2 = SHA256) over exactly the signed fields. Subscriptions are confirmed at the topic
 * region's own SNS endpoint, built from the TopicArn and Token (the SubscribeURL is not followed).
 */
export class SesSnsWebhookDriver implements WebhookDriverInterface {
  readonly name = 'ses';
  private readonly topicArns: ReadonlySet<string>;
  private readonly fetchFn: typeof fetch;
  private readonly now: () => Date;
  private readonly maxAgeMs: number;
  private readonly certificates: SigningCertificates;
  private readonly onReject: (reason: string) => void;

  constructor(options: SesSnsWebhookDriverOptions = {}) {
    this.topicArns = new Set(options.topicArns ?? []);
    this.fetchFn = options.fetch ?? ((...args) => globalThis.fetch(...args));
    this.now = options.now ?? (() => new Date());
    this.maxAgeMs = options.maxAgeMs ?? 3_600_000;
    this.certificates = new SigningCertificates(this.fetchFn, options.certificateCacheSize ?? 16);
    this.onReject = options.onReject ?? (() => {});
  }

  async verifySignature(request: IncomingWebhook): Promise<boolean> {
    const m = this.checked(await webhookRequestOf(request));
    if (!m) return false;
    const reject = (reason: string) => {
      this.onReject(reason);
      return false;
    };
    const age = this.now().getTime() - Date.parse(m.Timestamp);
    if (!Number.isFinite(age) || age > this.maxAgeMs || age < -FUTURE_SKEW_MS) return reject(`SNS Timestamp ${m.Timestamp.slice(0, 40)} is outside the accepted window`);
    if (!isTrustedCertUrl(m.SigningCertURL, snsHost(parseTopicArn(m.TopicArn)!))) return reject('SigningCertURL is not an SNS certificate URL of the topic region');
    if (!BASE64.test(m.Signature)) return reject('Signature is not base64');
    let cert: Awaited<ReturnType<SigningCertificates['get']>>;
    try {
      cert = await this.certificates.get(m.SigningCertURL);
    } catch (err) {
      return reject(`signing certificate unavailable: ${(err as Error).message}`);
    }
    const now = this.now().getTime();
    if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo)) return reject('signing certificate is not valid now');
    if (cert.publicKey.asymmetricKeyType !== 'rsa') return reject('signing certificate does not hold an RSA key');
    const ok = verify(m.SignatureVersion === '2' ? 'RSA-SHA256' : 'RSA-SHA1', Buffer.from(stringToSign(m), 'utf8'), cert.publicKey, Buffer.from(m.Signature, 'base64'));
    return ok || reject('signature does not match');
  }

  isSubscriptionConfirmation(request: WebhookRequest): boolean;
  isSubscriptionConfirmation(request: Request): Promise<boolean>;
  isSubscriptionConfirmation(request: IncomingWebhook): boolean | Promise<boolean> {
    return withRequest(request, (r) => snsMessage(r)?.Type === 'SubscriptionConfirmation');
  }

  async confirmSubscription(request: IncomingWebhook): Promise<void> {
    const m = this.checked(await webhookRequestOf(request));
    if (!m || m.Type !== 'SubscriptionConfirmation' || !m.Token || !TOKEN.test(m.Token)) throw new NotifyError('WEBHOOK_DRIVER', 'Not an SNS subscription confirmation from an allowed topic');
    const url = `https://${snsHost(parseTopicArn(m.TopicArn)!)}/?${new URLSearchParams({ Action: 'ConfirmSubscription', TopicArn: m.TopicArn, Token: m.Token })}`;
    let status: number;
    try {
      const fetchFn = this.fetchFn;
      const res = await fetchFn(url, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(10_000) });
      status = res.status;
      await res.body?.cancel().catch(() => {});
    } catch (err) {
      throw new NotifyError('WEBHOOK_DRIVER', `SNS subscription confirmation failed: ${(err as Error).message}`, { topicArn: m.TopicArn }, { cause: err });
    }
    if (status !== 200) throw new NotifyError('WEBHOOK_DRIVER', `SNS subscription confirmation answered ${status}`, { topicArn: m.TopicArn, status });
  }

  parseEvents(request: WebhookRequest): ParsedWebhookEvent[];
  parseEvents(request: Request): Promise<ParsedWebhookEvent[]>;
  parseEvents(request: IncomingWebhook): ParsedWebhookEvent[] | Promise<ParsedWebhookEvent[]> {
    return withRequest(request, (r) => {
      const m = snsMessage(r);
      return m?.Type === 'Notification' ? sesEvents(m.Message, m.MessageId) : [];
    });
  }

  /** The envelope when it is one this driver may act on (before any network access). */
  private checked(request: WebhookRequest): SnsMessage | undefined {
    const headers = request.headers;
    if (headers.get('x-amz-sns-rawdelivery') === 'true') return this.refuse('raw message delivery is unsigned; turn it off for this subscription');
    const m = snsMessage(request);
    if (!m) return this.refuse('not a signed SNS message');
    const headerType = headers.get('x-amz-sns-message-type');
    if (headerType !== null && headerType !== m.Type) return this.refuse('x-amz-sns-message-type does not match the message');
    const headerTopic = headers.get('x-amz-sns-topic-arn');
    if (headerTopic !== null && headerTopic !== m.TopicArn) return this.refuse('x-amz-sns-topic-arn does not match the message');
    if (!parseTopicArn(m.TopicArn)) return this.refuse('TopicArn is not an SNS topic ARN');
    if (this.topicArns.size > 0 && !this.topicArns.has(m.TopicArn)) return this.refuse(`topic ${m.TopicArn} is not in snsTopicArns`);
    return m;
  }

  private refuse(reason: string): undefined {
    this.onReject(reason);
    return undefined;
  }
}
