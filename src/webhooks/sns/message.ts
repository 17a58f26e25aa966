import type { WebhookRequest } from '../contract.ts';
import { isRecord } from '../payload-fields.ts';
import { jsonBody } from '../request-body.ts';

export type SnsType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

/** An SNS HTTP(S) message with the fields its signature covers checked to be strings. */
export interface SnsMessage {
  Type: SnsType;
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: '1' | '2';
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  Token?: string;
  SubscribeURL?: string;
}

/** The fields each message type signs, in the (alphabetical) order of the string to sign. */
const SIGNED: Record<SnsType, readonly (keyof SnsMessage)[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};
/** Only a Notification's Subject may be absent. */
const OPTIONAL = new Set<keyof SnsMessage>(['Subject']);

const TOPIC_ARN = /^arn:(aws|aws-cn|aws-us-gov):sns:([a-z]{2}(?:-[a-z]+)+-\d{1,2}):(\d{12}):([A-Za-z0-9_-]{1,256}(?:\.fifo)?)$/;

/** The message when the body is a well-formed SNS envelope, else undefined. */
export function snsMessage(request: WebhookRequest): SnsMessage | undefined {
  const body = jsonBody(request);
  if (!isRecord(body)) return undefined;
  const type = body.Type;
  if (type !== 'Notification' && type !== 'SubscriptionConfirmation' && type !== 'UnsubscribeConfirmation') return undefined;
  if (body.SignatureVersion !== '1' && body.SignatureVersion !== '2') return undefined;
  for (const key of ['Signature', 'SigningCertURL', ...SIGNED[type]] as const) {
    const v = body[key];
    if (v === undefined || v === null) {
      if (OPTIONAL.has(key)) continue;
      return undefined;
    }
    if (typeof v !== 'string') return undefined;
  }
  return body as unknown as SnsMessage;
}

/** `Key\nvalue\n` for each signed field present (SNS message signature format). */
export function stringToSign(m: SnsMessage): string {
  let out = '';
  for (const key of SIGNED[m.Type]) {
    const v = m[key];
    if (v === undefined || v === null) continue;
    out += `${key}\n${v}\n`;
  }
  return out;
}

export interface TopicParts {
  partition: 'aws' | 'aws-cn' | 'aws-us-gov';
  region: string;
  account: string;
  name: string;
}

export function parseTopicArn(arn: string): TopicParts | undefined {
  const m = TOPIC_ARN.exec(arn);
  return m ? { partition: m[1] as TopicParts['partition'], region: m[2], account: m[3], name: m[4] } : undefined;
}

/** The SNS endpoint host of a topic's region: sns.<region>.amazonaws.com, or .amazonaws.com.cn in China. */
export function snsHost(topic: TopicParts): string {
  return `sns.${topic.region}.amazonaws.com${topic.partition === 'aws-cn' ? '.cn' : ''}`;
}
