import net from 'node:net';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { createNotify } from '../../src/notify.ts';

export const FROM = 'news@example.com';

export function recipients(n: number, prefix = 'r'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`);
}

/**
 * The pooled SMTP transport both baselines use, tuned as well as nodemailer allows, so the ratio
 * measures notify's own cost and not a transport setting: 5 connections, kept open (no reconnect
 * every 100 messages) and with Nagle off (nodemailer's default socket waits ~40 ms for a delayed
 * ACK on the last small write of each message: ~110 msg/s instead of thousands on loopback).
 */
export function pooledTransport(smtpUrl: string) {
  const { hostname, port } = new URL(smtpUrl);
  const getSocket = (_opts: unknown, cb: (err: Error | null, socket?: { connection: net.Socket }) => void) => {
    const connection = net.connect({ host: hostname, port: Number(port), noDelay: true });
    connection.once('connect', () => cb(null, { connection }));
    connection.once('error', (err) => cb(err));
  };
  return nodemailer.createTransport({ pool: true, maxConnections: 5, maxMessages: Number.POSITIVE_INFINITY, host: hostname, port: Number(port), secure: false, ignoreTLS: true, getSocket } as nodemailer.TransportOptions);
}

const PLACEHOLDER = 'RCPT@example.com';

/** Builds one message per recipient before timing starts: headers differ per recipient, the body is shared. */
export async function prebuild(html: string, to: string[]): Promise<Buffer[]> {
  return perRecipient(await new MailComposer({ from: FROM, to: PLACEHOLDER, subject: 'This week', html, text: 'This week' }).compile().build(), to);
}

/** The template's placeholder address replaced by each recipient's. */
function perRecipient(template: Buffer, to: string[]): Buffer[] {
  const text = template.toString('latin1');
  const at = text.indexOf(PLACEHOLDER);
  if (at < 0) throw new Error('the template does not name its recipient');
  const before = Buffer.from(text.slice(0, at), 'latin1');
  const after = Buffer.from(text.slice(at + PLACEHOLDER.length), 'latin1');
  return to.map((addr) => Buffer.concat([before, Buffer.from(addr), after]));
}

/**
 * The message notify itself sends for this email (tracked links, the text part it derives, the
 * unsubscribe headers), captured from a campaign to one contact: the baseline that sends exactly
 * notify's bytes, so the ratio is notify's own cost per message and not a smaller message's.
 */
export async function notifyMessage(html: string): Promise<Buffer> {
  let raw: Buffer | undefined;
  const mailer = {
    send: async (m: { raw?: Buffer }) => {
      raw = m.raw;
      return true;
    },
  };
  const notify = await createNotify({ database: 'sqlite::memory:', mailer, configFile: false, env: {}, logLevel: 'warn', fromEmail: FROM, baseUrl: 'https://news.example.com' });
  try {
    await notify.contacts.upsert({ email: PLACEHOLDER, name: 'Reader' });
    const { id } = await notify.campaigns.create({ subject: 'This week', html });
    await notify.campaigns.send(id);
  } finally {
    await notify.close();
  }
  if (!raw) throw new Error('notify sent no message to capture');
  return raw;
}

/** Baseline 1b: the same pool sending notify's own message bytes, pre-built. */
let captured: Promise<Buffer> | undefined;
export async function notifyBytesRate(transport: Transport, html: string, count: number): Promise<number> {
  const to = recipients(count, 'same');
  captured ??= notifyMessage(html);
  return sendRaw(transport, to, perRecipient(await captured, to));
}

/** Messages per second for sending every message through the pool, all queued at once. */
export async function timeSends(send: (i: number) => Promise<unknown>, count: number): Promise<number> {
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: count }, (_, i) => send(i)));
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

export type Transport = ReturnType<typeof pooledTransport>;

/** Baseline 1: raw nodemailer pool sending pre-built raw MIME (built before the clock starts). */
export async function rawMimeRate(transport: Transport, html: string, count: number): Promise<number> {
  const to = recipients(count, 'raw');
  return sendRaw(transport, to, await prebuild(html, to));
}

/** Messages per second for pre-built messages, one per recipient, through the pool. */
function sendRaw(transport: Transport, to: string[], raws: Buffer[]): Promise<number> {
  return timeSends((i) => transport.sendMail({ envelope: { from: FROM, to: [to[i]] }, raw: raws[i] }), to.length);
}

/** Baseline 2: plain sendMail({ html }): nodemailer composes every message itself. */
export function sendMailHtmlRate(transport: Transport, html: string, count: number): Promise<number> {
  const to = recipients(count, 'html');
  return timeSends((i) => transport.sendMail({ from: FROM, to: to[i], subject: 'This week', html }), count);
}
