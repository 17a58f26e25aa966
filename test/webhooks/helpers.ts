import { createHmac, createSign, type KeyObject, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import type { WebhookRequest } from '../../src/webhooks/contract.ts';

const dir = new URL('./fixtures/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, dir), 'utf8');

/** The real SNS certificate of the fixtures, and the URL every fixture names. */
export const REAL_CERT = read('sns/signing-cert-2022.pem');
export const REAL_CERT_URL = 'https://sns.us-east-2.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem';
export const REAL_FIXTURES = ['notification-v1.json', 'notification-v2.json', 'notification-subject-v1.json', 'notification-subject-v2.json'];

export interface Fixture {
  text: string;
  json: Record<string, string>;
  /** one minute after the message's Timestamp: inside the window and the certificate's validity */
  now: () => Date;
}

export function realFixture(name: string): Fixture {
  const text = read(`sns/${name}`);
  const json = JSON.parse(text) as Record<string, string>;
  const at = Date.parse(json.Timestamp) + 60_000;
  return { text, json, now: () => new Date(at) };
}

/** Our own throwaway signer, for messages no public signed sample exists of. */
export const TEST_KEY = read('test-signing-key.pem');
export const TEST_CERT = read('test-signing-cert.pem');
/** a P-256 key and its certificate: SNS signs with RSA only, so a message signed so is refused */
export const TEST_EC_KEY = read('test-ec-signing-key.pem');
export const TEST_EC_CERT = read('test-ec-signing-cert.pem');
export const TEST_REGION = 'eu-west-1';
export const TEST_TOPIC = `arn:aws:sns:${TEST_REGION}:123456789012:ses-feedback`;
export const TEST_CERT_URL = `https://sns.${TEST_REGION}.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem`;
export const TEST_NOW = Date.UTC(2030, 5, 1, 12, 0, 0);

/** The SNS string to sign, written out here independently of src/. */
function snsStringToSign(m: Record<string, string>): string {
  const keys =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', ...(m.Subject !== undefined ? ['Subject'] : []), 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return keys.map((k) => `${k}\n${m[k]}\n`).join('');
}

let seq = 0;

/** An SNS message signed with the test key (SignatureVersion 2 unless told; another key when given). */
export function signedSns(fields: Partial<Record<string, string>> & { Type: string }, version: '1' | '2' = '2', key: string = TEST_KEY): Record<string, string> {
  const m: Record<string, string> = {
    MessageId: `0000000${++seq}-aaaa-bbbb-cccc-${String(Date.now()).padStart(12, '0')}`,
    TopicArn: TEST_TOPIC,
    Message: '',
    Timestamp: new Date(TEST_NOW - 30_000).toISOString(),
    ...(fields as Record<string, string>),
    SignatureVersion: version,
    SigningCertURL: TEST_CERT_URL,
  };
  const signer = createSign(version === '2' ? 'RSA-SHA256' : 'RSA-SHA1');
  signer.update(snsStringToSign(m), 'utf8');
  m.Signature = signer.sign(key, 'base64');
  return m;
}

export function sesBounce(bounceType: 'Permanent' | 'Transient' | 'Undetermined', emails: string[], messageId = 'ses-msg-1', form: 'notificationType' | 'eventType' = 'notificationType'): string {
  return JSON.stringify({
    [form]: 'Bounce',
    bounce: { bounceType, bounceSubType: 'General', bouncedRecipients: emails.map((emailAddress) => ({ emailAddress, status: '5.1.1' })), timestamp: '2030-06-01T11:59:00.000Z' },
    mail: { messageId, source: 'news@example.com', destination: emails },
  });
}

export function sesComplaint(emails: string[], messageId = 'ses-msg-1', form: 'notificationType' | 'eventType' = 'notificationType'): string {
  return JSON.stringify({
    [form]: 'Complaint',
    complaint: { complainedRecipients: emails.map((emailAddress) => ({ emailAddress })), complaintFeedbackType: 'abuse' },
    mail: { messageId, destination: emails },
  });
}

export function subscriptionConfirmation(subscribeUrl = `https://sns.${TEST_REGION}.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TEST_TOPIC}&Token=tok123`): Record<string, string> {
  return signedSns({
    Type: 'SubscriptionConfirmation',
    Token: 'tok123',
    Message: `You have chosen to subscribe to the topic ${TEST_TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
    SubscribeURL: subscribeUrl,
  });
}

export interface FakeFetch {
  fetch: typeof fetch;
  calls: { url: string; init?: RequestInit }[];
}

/** Serves certificates by URL; a function value answers dynamically; anything else is a 404. */
export function fakeFetch(routes: Record<string, string | ((url: string) => Response | Promise<Response>)> = { [REAL_CERT_URL]: REAL_CERT, [TEST_CERT_URL]: TEST_CERT }): FakeFetch {
  const calls: FakeFetch['calls'] = [];
  const fn = async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    calls.push({ url, init });
    const route = routes[url] ?? Object.entries(routes).find(([k]) => k.endsWith('*') && url.startsWith(k.slice(0, -1)))?.[1];
    if (typeof route === 'function') return route(url);
    if (typeof route === 'string') return new Response(route, { status: 200 });
    return new Response('not found', { status: 404 });
  };
  return { fetch: fn as typeof fetch, calls };
}

export function webhookRequest(body: string | Buffer, headers: Record<string, string> = {}): WebhookRequest {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return { method: 'POST', url: 'http://localhost:3000/notify/webhook', headers: new Headers(headers), body: bytes, text: bytes.toString('utf8') };
}

/** A logger whose JSON lines the test can read (what an operator would see in the logs). */
export function capturedLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** A provider's documented example payload from fixtures/ (see fixtures/README.md for its source). */
export function providerExample(name: string): string {
  return read(name);
}

/** SendGrid's signature headers: ECDSA P-256 / SHA-256 over the timestamp and the exact body. */
export function sendgridHeaders(body: string, privateKey: KeyObject, timestamp = '1700000000'): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-twilio-email-event-webhook-timestamp': timestamp,
    'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(timestamp + body), privateKey).toString('base64'),
  };
}

/** A Mailgun webhook body: the event under `event-data`, signed as Mailgun does (HMAC of timestamp + token). */
export function mailgunBody(eventData: unknown, signingKey: string, token: string, timestamp = '1700000000'): string {
  const signature = createHmac('sha256', signingKey).update(timestamp + token).digest('hex');
  return JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData });
}
