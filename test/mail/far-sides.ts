import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { simpleParser } from 'mailparser';
import pino from 'pino';
import type { Mailer, OutgoingMessage } from '../../src/mail/contract.ts';
import { createMailer, type TransportDeps } from '../../src/mail/index.ts';
import { type SinkOptions, startSmtpSink } from '../helpers/smtp-sink.ts';

/** What reached the far side of a transport for one message. */
export interface Arrival {
  subject: string;
  /** the message as the far side holds it; absent where only a record of it is kept (log) */
  raw?: Buffer;
  /** every address the transport was told to deliver to (the envelope); absent where none is kept (outbox) */
  recipients?: string[];
  sendToken?: string;
}

/** The other end of one transport: where its messages arrive, and how to make it refuse them. */
export interface FarSide {
  /** a new transport to this far side, built the way the `mailer` option builds it */
  open(): Mailer;
  /** everything that arrived so far */
  arrivals(): Promise<Arrival[]>;
  /** makes the far side refuse every message until the returned undo runs; absent: it cannot refuse */
  refuse?(): Promise<() => Promise<void>>;
  dispose(): Promise<void>;
}

const silent = pino({ level: 'silent' });
const parsedSubject = async (raw: Buffer) => (await simpleParser(raw)).subject ?? '';
const build = (mailer: string | Mailer, deps: Omit<TransportDeps, 'log'> = {}, log = silent) => createMailer({ mailer, testMode: false }, log, deps);

/** `smtp://` to the in-process SMTP sink; the sink refuses with 550. */
export const smtpSink = (): Promise<FarSide> => smtpSinkWith({});

/** the same over STARTTLS (a self-signed certificate) with AUTH, credentials from the URL */
export const smtpTlsAuthSink = (): Promise<FarSide> => smtpSinkWith({ tls: true, auth: { user: 'sender@example.com', pass: 'pa:ss wörd' } });

async function smtpSinkWith(options: SinkOptions): Promise<FarSide> {
  const sink = await startSmtpSink(options);
  return {
    open: () => build(sink.url),
    arrivals: async () =>
      sink.messages.map((m) => {
        // every arrival came the way the far side requires, or it is no arrival
        if ((options.tls && !m.secure) || (options.auth && m.user !== options.auth.user)) throw new Error('a message arrived without TLS or AUTH');
        return { subject: m.parsed.subject ?? '', raw: m.raw, recipients: m.envelope.to };
      }),
    async refuse() {
      sink.failNext(Number.MAX_SAFE_INTEGER);
      return async () => sink.failNext(0);
    },
    dispose: () => sink.close(),
  };
}

/** `outbox:<dir>`; it refuses when its folder has become a file. */
export async function outboxFolder(): Promise<FarSide> {
  const root = mkdtempSync(join(tmpdir(), 'notify-contract-outbox-'));
  const dir = join(root, 'out');
  return {
    open: () => build(`outbox:${dir}`),
    async arrivals() {
      let names: string[];
      try {
        names = readdirSync(dir).filter((n) => n.endsWith('.eml'));
      } catch {
        return [];
      }
      return Promise.all(
        names.map(async (n) => {
          const raw = readFileSync(join(dir, n));
          return { raw, subject: await parsedSubject(raw) };
        }),
      );
    },
    async refuse() {
      const aside = join(root, 'aside');
      mkdirSync(dir, { recursive: true });
      renameSync(dir, aside);
      writeFileSync(dir, 'a file where the folder was');
      return async () => {
        rmSync(dir);
        renameSync(aside, dir);
      };
    },
    dispose: async () => rmSync(root, { recursive: true, force: true }),
  };
}

/** `log`: nothing leaves the process; the record is the log line. */
export async function logLines(): Promise<FarSide> {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const log = pino({ level: 'info' }, stream);
  return {
    open: () => build('log', {}, log),
    arrivals: async () =>
      lines
        .filter((l) => l.msg === 'would send (not delivered)')
        .map((l) => ({ subject: String(l.subject), recipients: [...(l.to as string[]), ...(l.cc as string[]), ...(l.bcc as string[])], sendToken: String(l.sendToken) })),
    dispose: async () => {},
  };
}

/**
 * `ses` against a stand-in for the SESv2 SendEmail API, answering as the API reference documents:
 * 200 `{"MessageId": ...}`, https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html;
 * refusal: 400 MessageRejected "Email address is not verified",
 * https://repost.aws/knowledge-center/ses-554-400-message-rejected-error
 */
export async function sesApi(): Promise<FarSide> {
  const bodies: { Destination: Record<string, string[]>; Content: { Raw: { Data: string } } }[] = [];
  let refusing = false;
  let seq = 0;
  const fakeFetch = (async (_url: URL, init: RequestInit) => {
    if (refusing) {
      return new Response(JSON.stringify({ message: 'Email address is not verified. The following identities failed the check in region EU-WEST-1: news@example.com' }), {
        status: 400,
        headers: { 'x-amzn-ErrorType': 'MessageRejected' },
      });
    }
    bodies.push(JSON.parse(String(init.body)));
    return new Response(JSON.stringify({ MessageId: `0100018c-contract-${++seq}` }), { status: 200 });
  }) as unknown as typeof fetch;
  const env = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
  return {
    open: () => build('ses', { fetch: fakeFetch, env }),
    arrivals: () =>
      Promise.all(
        bodies.map(async (b) => {
          const raw = Buffer.from(b.Content.Raw.Data, 'base64');
          const d = b.Destination;
          return { raw, subject: await parsedSubject(raw), recipients: [...d.ToAddresses, ...(d.CcAddresses ?? []), ...(d.BccAddresses ?? [])] };
        }),
      ),
    async refuse() {
      refusing = true;
      return async () => {
        refusing = false;
      };
    },
    dispose: async () => {},
  };
}

/** An application's own Mailer object, passed as the `mailer` option; it refuses by answering false. */
export async function customObject(): Promise<FarSide> {
  const got: OutgoingMessage[] = [];
  let refusing = false;
  return {
    open: () =>
      build({
        name: 'custom',
        async send(m: OutgoingMessage) {
          if (refusing) return false;
          got.push(m);
          return { messageId: m.messageId };
        },
      }),
    arrivals: () => Promise.all(got.map(async (m) => ({ raw: m.raw, subject: m.raw ? await parsedSubject(m.raw) : m.subject, recipients: [...m.to, ...(m.cc ?? []), ...(m.bcc ?? [])], sendToken: m.sendToken }))),
    async refuse() {
      refusing = true;
      return async () => {
        refusing = false;
      };
    },
    dispose: async () => {},
  };
}
