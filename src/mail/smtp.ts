import net from 'node:net';
import nodemailer from 'nodemailer';
import { NotifyError } from '../errors.ts';
import { asciiDomain, needsSmtpUtf8, smtpUtf8Required } from './address.ts';
import type { Mailer, OutgoingMessage } from './contract.ts';
import { type SmtpProbeOptions, smtpExtensions } from './smtp-probe.ts';

/** The bare address of a formatted From value (`"News" <news@example.com>` -> `news@example.com`). */
export function addressOf(from: string): string {
  const m = /<([^<>]+)>\s*$/.exec(from);
  return (m ? m[1] : from).trim();
}

/** MAIL FROM and RCPT TO: every domain as punycode; a non-ASCII local part stays (SMTPUTF8). */
export function envelopeOf(m: OutgoingMessage): { from: string; to: string[] } {
  return { from: asciiDomain(m.envelopeFrom ?? addressOf(m.from)), to: [...m.to, ...(m.cc ?? []), ...(m.bcc ?? [])].map(asciiDomain) };
}

/**
 * Connections with Nagle's algorithm off. nodemailer writes the end of DATA (`.`) as its own small
 * segment; with Nagle on it waits for the ACK of the body, which the server delays (~40 ms on Linux),
 * capping each pooled connection at ~20 messages a second. Measured: 110 -> 3,700 msg/s on loopback.
 * TLS (smtps, STARTTLS) is still negotiated by nodemailer on top of this socket.
 */
function noDelaySocket(options: { host?: string; port?: number }, callback: (err: Error | null, socketOptions?: { connection: net.Socket }) => void): void {
  const socket = net.connect({ host: options.host, port: options.port ?? 25, noDelay: true });
  const onError = (err: Error) => callback(err);
  socket.once('error', onError);
  socket.once('connect', () => {
    socket.off('error', onError);
    callback(null, { connection: socket });
  });
}

/** nodemailer's pool reports a connection closed under a message without an error code; give it one. */
function withConnectionCode(err: unknown): never {
  if (err instanceof Error && !('code' in err) && /connection was closed/i.test(err.message)) Object.assign(err, { code: 'ECONNECTION' });
  throw err;
}

/**
 * `smtp://user:pass@host:port` or `smtps://...`; query options: `maxConnections` (default 5),
 * `rejectUnauthorized=false` for self-signed test servers. Connections are pooled and reused across
 * messages; a pre-built message (`raw`) is streamed as-is, so nodemailer composes nothing per recipient.
 */
export function createSmtpMailer(url: string, opts: { smtpName?: string } = {}): Mailer {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NotifyError('CONFIG_INVALID', `Option 'mailer' is not a valid SMTP URL`, { option: 'mailer' });
  }
  const secure = parsed.protocol === 'smtps:';
  const q = parsed.searchParams;
  // Whether the server offers SMTPUTF8 (RFC 6531) is asked on a connection of its own: nodemailer's
  // pool would send a non-ASCII address without the keyword to a server that does not offer it,
  // and the server would then take or bounce it on its own terms.
  const probe: SmtpProbeOptions = {
    host: parsed.hostname,
    port: Number(parsed.port) || (secure ? 465 : 587),
    secure,
    name: opts.smtpName,
    rejectUnauthorized: q.get('rejectUnauthorized') !== 'false',
  };
  // asked once, when the first address that needs it comes; asked again after a failed probe
  let smtpUtf8: Promise<boolean> | undefined;
  const transport = nodemailer.createTransport({
    pool: true,
    host: parsed.hostname,
    port: Number(parsed.port) || (secure ? 465 : 587),
    secure,
    auth: parsed.username ? { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } : undefined,
    // EHLO name: without one nodemailer says the machine's host name, or [127.0.0.1] when it has none
    name: opts.smtpName,
    maxConnections: Number(q.get('maxConnections')) || 5,
    maxMessages: Number.POSITIVE_INFINITY,
    // A message whose connection closes under it fails (a connection error, so transient) instead of
    // going out again on another connection: the server may already have taken it, and with
    // nodemailer's default (requeue without limit) a server that drops every connection makes the
    // send wait for ever.
    maxRequeues: 0,
    tls: q.get('rejectUnauthorized') === 'false' ? { rejectUnauthorized: false } : undefined,
    getSocket: noDelaySocket,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    name: 'smtp',
    async send(m) {
      const envelope = envelopeOf(m);
      const addresses = [envelope.from, ...envelope.to];
      if (addresses.some(needsSmtpUtf8)) {
        smtpUtf8 ??= smtpExtensions(probe).then((offered) => offered.has('SMTPUTF8'), (err) => {
          smtpUtf8 = undefined;
          throw err;
        });
        if (!(await smtpUtf8)) throw smtpUtf8Required(addresses, `the SMTP server ${parsed.hostname}:${probe.port}`);
      }
      const info = await (m.raw
        ? transport.sendMail({ envelope, raw: m.raw })
        : transport.sendMail({ envelope, from: m.from, to: m.to, cc: m.cc, subject: m.subject, html: m.html, text: m.text, headers: m.headers })
      ).catch(withConnectionCode);
      if (info.rejected?.length && info.accepted?.length === 0) return false;
      return { messageId: m.messageId ?? info.messageId };
    },
    async close() {
      transport.close();
    },
  };
}
