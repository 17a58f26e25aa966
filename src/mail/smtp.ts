import { randomBytes } from 'node:crypto';
import { NotifyError } from '../errors.ts';
import { asciiDomain, needsSmtpUtf8, smtpUtf8Required } from './address.ts';
import type { Mailer, OutgoingMessage } from './contract.ts';
import { composeMime } from './mime.ts';
import { SmtpPool } from './smtp-pool.ts';
import type { SmtpSessionOptions } from './smtp-connect.ts';
import { SmtpSession } from './smtp-session.ts';

/** The bare address of a formatted From value (`"News" <news@example.com>` -> `news@example.com`). */
export function addressOf(from: string): string {
  const m = /<([^<>]+)>\s*$/.exec(from);
  return (m ? m[1] : from).trim();
}

/**
 * MAIL FROM and RCPT TO: every domain as punycode and in lower case; the local part as given (a
 * non-ASCII one needs SMTPUTF8). A domain's case means nothing, but what reads the envelope on the
 * far side (per-domain accounting, logs, tests) may compare it as text; nodemailer lower-cased it too.
 */
export function envelopeOf(m: OutgoingMessage): { from: string; to: string[] } {
  return { from: envelopeAddress(m.envelopeFrom ?? addressOf(m.from)), to: [...m.to, ...(m.cc ?? []), ...(m.bcc ?? [])].map(envelopeAddress) };
}

function envelopeAddress(address: string): string {
  const ascii = asciiDomain(address);
  const at = ascii.lastIndexOf('@');
  return at < 0 ? ascii : ascii.slice(0, at + 1) + ascii.slice(at + 1).toLowerCase();
}

/** query options of the URL, in milliseconds, with their defaults */
const TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000, idleTimeout: 30_000 };
const KNOWN = new Set(['maxConnections', 'rejectUnauthorized', ...Object.keys(TIMEOUTS)]);

/**
 * `smtp://user:pass@host:port` (STARTTLS when the server offers it) or `smtps://...` (TLS from the
 * first byte). Query options: `maxConnections` (default 5), `rejectUnauthorized=false` for
 * self-signed test servers, and timeouts in ms: `connectionTimeout`, `greetingTimeout`,
 * `socketTimeout` (silence while an answer is awaited), `idleTimeout` (an unused pooled connection
 * is closed). notify speaks SMTP itself (smtp-session.ts): the dispatcher's messages are lists of
 * buffers shared between recipients, which go to the socket as they are, dot-stuffed once each.
 */
export function createSmtpMailer(url: string, opts: { smtpName?: string } = {}): Mailer {
  const o = sessionOptions(url, opts.smtpName);
  const pool = new SmtpPool({ open: () => SmtpSession.open(o.session), max: o.maxConnections, idleMs: o.idleMs });
  const send = async (m: OutgoingMessage, ready?: Promise<boolean>) => {
    // a rejection before the session awaits it is still this send's failure, not an unhandled one
    ready?.catch(() => {});
    const envelope = checkedEnvelope(envelopeOf(m));
    const smtpUtf8 = needsSmtpUtf8(envelope.from) || envelope.to.some(needsSmtpUtf8);
    const messageId = m.messageId ?? (m.raw || m.rawParts ? undefined : `<${randomBytes(12).toString('hex')}@${domainOf(envelope.from)}>`);
    const parts = m.rawParts ?? [m.raw ?? composeMime({ from: m.from, to: m.to, cc: m.cc, subject: m.subject, date: Date.now(), messageId: messageId!, headers: m.headers }, m.text, m.html)];
    await pool.use((session) => {
      // asked of the connection that would carry it: a server that does not offer SMTPUTF8 would
      // take or bounce the address on its own terms
      if (smtpUtf8 && !session.extensions.has('SMTPUTF8')) throw smtpUtf8Required([envelope.from, ...envelope.to], `the SMTP server ${o.session.host}:${o.session.port}`);
      return session.send(envelope, parts, smtpUtf8, ready);
    });
    return { messageId };
  };
  return {
    name: 'smtp',
    send: (m) => send(m),
    sendWhen: send,
    concurrency: o.maxConnections,
    close: () => pool.close(),
  };
}

/** an address that would end its SMTP command early (CR, LF) or its brackets is refused, as is no recipient */
function checkedEnvelope(e: { from: string; to: string[] }): { from: string; to: string[] } {
  if (e.to.length === 0) throw new NotifyError('INVALID_INPUT', 'A message needs at least one recipient');
  for (const address of [e.from, ...e.to]) {
    if (/[\r\n<>\0]/.test(address)) throw new NotifyError('INVALID_EMAIL', `${JSON.stringify(address)} cannot be an SMTP envelope address`, { email: address });
  }
  return e;
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1) || 'notify';
}

function sessionOptions(url: string, name: string | undefined): { session: SmtpSessionOptions; maxConnections: number; idleMs: number } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NotifyError('CONFIG_INVALID', `Option 'mailer' is not a valid SMTP URL`, { option: 'mailer' });
  }
  const q = parsed.searchParams;
  for (const key of q.keys()) {
    if (!KNOWN.has(key)) throw new NotifyError('CONFIG_INVALID', `Option 'mailer': unknown SMTP URL option '${key}' (known: ${[...KNOWN].join(', ')})`, { option: 'mailer' });
  }
  const secure = parsed.protocol === 'smtps:';
  const ms = (key: keyof typeof TIMEOUTS) => positive(q, key) ?? TIMEOUTS[key];
  return {
    session: {
      host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(parsed.port) || (secure ? 465 : 587),
      secure,
      name,
      rejectUnauthorized: q.get('rejectUnauthorized') !== 'false',
      auth: parsed.username ? { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } : undefined,
      connectTimeoutMs: ms('connectionTimeout'),
      greetingTimeoutMs: ms('greetingTimeout'),
      commandTimeoutMs: ms('socketTimeout'),
    },
    maxConnections: positive(q, 'maxConnections') ?? 5,
    idleMs: ms('idleTimeout'),
  };
}

function positive(q: URLSearchParams, key: string): number | undefined {
  const v = q.get(key);
  if (v === null) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new NotifyError('CONFIG_INVALID', `Option 'mailer': SMTP URL option '${key}' must be a positive whole number, got ${JSON.stringify(v)}`, { option: 'mailer' });
  return n;
}
