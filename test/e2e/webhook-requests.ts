// How each provider signs what it POSTs to /notify/webhook, written from its documentation, and
// the string options that configure the matching built-in driver. Nothing is shared with src/.
import { createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { signedSns, TEST_REGION, TEST_TOPIC } from '../webhooks/helpers.ts';
import * as payloads from './provider-payloads.ts';

export type DriverName = 'ses' | 'postmark' | 'sendgrid' | 'mailgun';

export interface ProviderRig {
  driver: DriverName;
  /** notify.config.json options (strings, as a deployment writes them) */
  config: Record<string, string>;
  /** the provider's signed POST of a hard bounce / spam complaint for the address */
  bounce(email: string): RequestInit;
  complaint(email: string): RequestInit;
  /** a bounce whose signature does not verify (wrong secret, or changed after signing) */
  forged(email: string): RequestInit;
}

/** The SNS HTTP POST of one message: the envelope as body, the headers SNS adds. */
function snsPost(m: Record<string, string>): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': m.Type, 'x-amz-sns-message-id': m.MessageId, 'x-amz-sns-topic-arn': m.TopicArn },
    body: JSON.stringify(m),
  };
}

/** An SES notification published to the topic, signed now with the test certificate's key. */
const snsNotification = (message: Record<string, unknown>) => signedSns({ Type: 'Notification', Message: JSON.stringify(message), Timestamp: new Date().toISOString() });

/** SNS's subscription handshake: a signed SubscriptionConfirmation carrying the token to confirm with. */
export function snsSubscriptionConfirmation(token: string): RequestInit {
  return snsPost(
    signedSns({
      Type: 'SubscriptionConfirmation',
      Token: token,
      Message: `You have chosen to subscribe to the topic ${TEST_TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
      SubscribeURL: `https://sns.${TEST_REGION}.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(TEST_TOPIC)}&Token=${token}`,
      Timestamp: new Date().toISOString(),
    }),
  );
}

const ses: ProviderRig = {
  driver: 'ses',
  config: { webhookDriver: 'ses', snsTopicArns: TEST_TOPIC },
  bounce: (email) => snsPost(snsNotification(payloads.sesBounce(email))),
  complaint: (email) => snsPost(snsNotification(payloads.sesComplaint(email))),
  forged(email) {
    const m = snsNotification(payloads.sesBounce('someone.else@example.com'));
    return snsPost({ ...m, Message: JSON.stringify(payloads.sesBounce(email)) });
  },
};

/** Postmark sends the HTTP Basic credentials set on the webhook. */
function postmarkRig(): ProviderRig {
  const [username, password] = ['notify-hooks', randomBytes(12).toString('hex')];
  const post = (body: unknown, pass = password): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${username}:${pass}`).toString('base64')}` },
    body: JSON.stringify(body),
  });
  return {
    driver: 'postmark',
    config: { webhookDriver: 'postmark', postmarkWebhookUsername: username, postmarkWebhookPassword: password },
    bounce: (email) => post(payloads.postmarkBounce(email)),
    complaint: (email) => post(payloads.postmarkComplaint(email)),
    forged: (email) => post(payloads.postmarkBounce(email), 'not-the-password'),
  };
}

/** SendGrid's Signed Event Webhook: ECDSA P-256 over the timestamp header followed by the body. */
function sendgridRig(): ProviderRig {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const post = (events: unknown[], key = privateKey): RequestInit => {
    const body = JSON.stringify(events);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = sign('sha256', Buffer.from(timestamp + body), key).toString('base64');
    return {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-twilio-email-event-webhook-signature': signature, 'x-twilio-email-event-webhook-timestamp': timestamp },
      body,
    };
  };
  const eventId = () => randomBytes(16).toString('base64');
  return {
    driver: 'sendgrid',
    config: { webhookDriver: 'sendgrid', sendgridWebhookPublicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') },
    bounce: (email) => post([payloads.sendgridBounce(email, eventId())]),
    complaint: (email) => post([payloads.sendgridSpamReport(email, eventId())]),
    forged: (email) => post([payloads.sendgridBounce(email, eventId())], other),
  };
}

/** Mailgun signs in the body: hex HMAC-SHA256 of timestamp + token under the webhook signing key. */
function mailgunRig(): ProviderRig {
  const signingKey = randomBytes(16).toString('hex');
  const post = (eventData: unknown, key = signingKey): RequestInit => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = randomBytes(25).toString('hex');
    const signature = createHmac('sha256', key).update(timestamp + token).digest('hex');
    return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData }) };
  };
  return {
    driver: 'mailgun',
    config: { webhookDriver: 'mailgun', mailgunWebhookSigningKey: signingKey },
    bounce: (email) => post(payloads.mailgunPermanentFailure(email)),
    complaint: (email) => post(payloads.mailgunComplaint(email)),
    forged: (email) => post(payloads.mailgunPermanentFailure(email), 'key-of-somebody-else'),
  };
}

/** One rig per built-in driver, with fresh secrets. */
export function providerRigs(): ProviderRig[] {
  return [ses, postmarkRig(), sendgridRig(), mailgunRig()];
}
