import { createHash, createHmac } from 'node:crypto';
import { NotifyError } from '../errors.ts';
import type { Mailer } from './contract.ts';
import { composeMime } from './mime.ts';
import { needsSmtpUtf8, smtpUtf8Required } from './address.ts';
import { envelopeOf } from './smtp.ts';

export interface SesOptions {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** injectable for tests; default global fetch */
  fetch?: typeof fetch;
  /** default https://email.<region>.amazonaws.com */
  endpoint?: string;
  now?: () => number;
}

/** Reads the standard AWS variables; missing ones fail the first send (so testMode works without them). */
export function sesOptionsFromEnv(env: Record<string, string | undefined>, fetchImpl?: typeof fetch): Partial<SesOptions> {
  return {
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION,
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    sessionToken: env.AWS_SESSION_TOKEN,
    fetch: fetchImpl,
  };
}

/**
 * Amazon SES through its HTTP API (SESv2 SendEmail with raw content), signed with AWS Signature
 * Version 4. No SDK: one signed POST per message. SES's MessageId is returned so bounce and complaint
 * notifications can be matched to the send.
 */
export function createSesMailer(opts: Partial<SesOptions>): Mailer {
  return {
    name: 'ses',
    async send(m) {
      const o = complete(opts);
      // SES takes 7-bit addresses only: punycode domains, and no SMTPUTF8
      // (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_Destination.html)
      const envelope = envelopeOf(m);
      if ([envelope.from, ...envelope.to].some(needsSmtpUtf8)) throw smtpUtf8Required([envelope.from, ...envelope.to], 'Amazon SES');
      const ascii = (list: string[] | undefined) => envelopeOf({ ...m, to: list ?? [], cc: [], bcc: [] }).to;
      const raw = m.raw ?? composeMime({ from: m.from, to: m.to, cc: m.cc, subject: m.subject, date: (o.now ?? Date.now)(), messageId: m.messageId ?? `<${m.sendToken}@notify>`, headers: m.headers }, m.text, m.html);
      const body = JSON.stringify({
        FromEmailAddress: envelopeOf({ ...m, envelopeFrom: undefined }).from,
        Destination: { ToAddresses: ascii(m.to), CcAddresses: ascii(m.cc), BccAddresses: ascii(m.bcc) },
        Content: { Raw: { Data: raw.toString('base64') } },
        // SES chooses the MAIL FROM itself; with a bounce mailbox, SES's own bounce and complaint
        // emails go to the send's VERP address instead (the identity's feedback forwarding must be on)
        // (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html)
        ...(m.envelopeFrom ? { FeedbackForwardingEmailAddress: m.envelopeFrom } : {}),
      });
      const url = new URL('/v2/email/outbound-emails', o.endpoint ?? `https://email.${o.region}.amazonaws.com`);
      const headers = signV4(o, url, body, (o.now ?? Date.now)());
      const res = await (o.fetch ?? fetch)(url, { method: 'POST', headers, body, redirect: 'error' });
      const text = await res.text();
      if (!res.ok) throw new NotifyError('MAILER_FAILED', `SES answered ${res.status}: ${text.slice(0, 300)}`, { status: res.status });
      const messageId = (JSON.parse(text) as { MessageId?: string }).MessageId;
      return { messageId };
    },
  };
}

function complete(o: Partial<SesOptions>): SesOptions {
  for (const k of ['region', 'accessKeyId', 'secretAccessKey'] as const) {
    if (!o[k]) throw new NotifyError('CONFIG_INVALID', `mailer 'ses' needs ${k} (AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)`, { option: 'mailer' });
  }
  return o as SesOptions;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s).digest();

/** AWS Signature Version 4 headers for a JSON POST. */
export function signV4(o: SesOptions, url: URL, body: string, now: number): Record<string, string> {
  const amzDate = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = { 'content-type': 'application/json', host: url.host, 'x-amz-date': amzDate };
  if (o.sessionToken) headers['x-amz-security-token'] = o.sessionToken;
  const names = Object.keys(headers).sort();
  const canonical = ['POST', url.pathname, '', ...names.map((n) => `${n}:${headers[n]}`), '', names.join(';'), sha256(body)].join('\n');
  const scope = `${day}/${o.region}/ses/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${o.secretAccessKey}`, day), o.region), 'ses'), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  const { host: _host, ...sent } = headers;
  return { ...sent, authorization: `AWS4-HMAC-SHA256 Credential=${o.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}` };
}
