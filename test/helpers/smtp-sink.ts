import type { AddressInfo, Socket } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SinkMessage {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
  /** the name the client gave in EHLO/HELO */
  ehlo: string;
  /** performance.now() when the end of DATA arrived (spacing between deliveries) */
  at: number;
  /** the client said SMTPUTF8 in MAIL FROM (RFC 6531) */
  smtpUtf8: boolean;
  /** the message came over TLS (STARTTLS) */
  secure: boolean;
  /** the user the client authenticated as */
  user?: string;
}

export interface SinkOptions {
  parse?: boolean;
  /** a server that does not offer SMTPUTF8 */
  hideSmtpUtf8?: boolean;
  /** offers STARTTLS with smtp-server's own self-signed certificate (the url says rejectUnauthorized=false) */
  tls?: boolean;
  /** requires AUTH (PLAIN or LOGIN) with these credentials (the url carries them) */
  auth?: { user: string; pass: string };
  /** waits this long before answering each message's DATA (a slow server: sends overlap) */
  replyDelayMs?: number;
}

export interface SmtpSink {
  port: number;
  url: string;
  messages: SinkMessage[];
  /**
   * MAIL FROM and RCPT TO lines as the client sent them (smtp-server shows a punycode domain as
   * Unicode in the envelope; these are the bytes on the wire)
   */
  commands: string[];
  /** resolves when at least n messages arrived (rejects after timeoutMs) */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  /** rejects the next `count` messages after DATA, with `reply` (default `550 rejected by test sink`) */
  failNext(count: number, reply?: string): void;
  /**
   * answers RCPT TO for `address` with `reply` (default a 421, after which the server closes the
   * connection as RFC 5321 says) the next `count` times (Infinity: always); then accepts it
   */
  failFor(address: string, count: number, reply?: string): void;
  /** RCPT TO attempts per address, refused ones included */
  attempts: Map<string, number>;
  /**
   * holds the answer to the next message for `address` (its DATA received, the client waiting)
   * until release(): `reached` resolves once it arrived (what happens while a send is in flight)
   */
  holdFor(address: string): { reached: Promise<void>; release(): void };
  /** TCP connections open now, and the most that were open at once */
  connections: { open: number; most: number };
  close(): Promise<void>;
}

/** A real SMTP server in-process: the dispatch path is exercised byte for byte, nothing leaves the machine. */
export async function startSmtpSink(opts: SinkOptions = {}): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const commands: string[] = [];
  const quiet = () => {};
  const logger = {
    trace: quiet,
    info: quiet,
    warn: quiet,
    error: quiet,
    fatal: quiet,
    debug(meta: { tnx?: string }, _message: string, line?: string) {
      if (meta?.tnx === 'command' && typeof line === 'string' && /^(MAIL|RCPT) /i.test(line)) commands.push(line);
    },
  };
  let failures = 0;
  let failReply = '';
  const waiters: { n: number; resolve: () => void }[] = [];
  const refusals = new Map<string, { left: number; reply: string }>();
  const attempts = new Map<string, number>();
  const holds = new Map<string, { arrived(): void; gate: Promise<void> }>();
  const auth = opts.auth;
  const server = new SMTPServer({
    authOptional: !auth,
    disabledCommands: [...(opts.tls ? [] : ['STARTTLS']), ...(auth ? [] : ['AUTH'])],
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: !opts.tls,
    onAuth(a, _session, callback) {
      if (auth && a.username === auth.user && a.password === auth.pass) return callback(null, { user: a.username });
      callback(smtpError('535 5.7.8 authentication failed'));
    },
    logger: logger as never,
    size: 30 * 1024 * 1024,
    hideSMTPUTF8: opts.hideSmtpUtf8 === true,
    onRcptTo(address, _session, callback) {
      const to = address.address.toLowerCase();
      attempts.set(to, (attempts.get(to) ?? 0) + 1);
      const refusal = refusals.get(to);
      if (!refusal || refusal.left <= 0) return callback();
      refusal.left--;
      callback(smtpError(refusal.reply));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        if (opts.replyDelayMs) await new Promise((r) => setTimeout(r, opts.replyDelayMs));
        const at = performance.now();
        if (failures > 0) {
          failures--;
          return callback(smtpError(failReply));
        }
        const raw = Buffer.concat(chunks);
        const parsed = opts.parse === false ? ({} as ParsedMail) : await simpleParser(raw);
        messages.push({
          envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) },
          raw,
          parsed,
          ehlo: session.hostNameAppearsAs,
          at,
          smtpUtf8: (session.envelope as { smtpUtf8?: boolean }).smtpUtf8 === true,
          secure: session.secure,
          user: session.user as string | undefined,
        });
        for (const w of waiters.filter((w) => messages.length >= w.n)) w.resolve();
        for (const r of session.envelope.rcptTo) {
          const hold = holds.get(r.address.toLowerCase());
          if (!hold) continue;
          holds.delete(r.address.toLowerCase());
          hold.arrived();
          await hold.gate;
        }
        callback();
      });
    },
  });
  // A client that vanishes mid-session (the crash tests kill senders with SIGKILL) resets its socket;
  // smtp-server reports that as a server 'error', which unheard would crash the test process.
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') throw err;
  });
  const connections = { open: 0, most: 0 };
  server.server.on('connection', (socket: Socket) => {
    connections.most = Math.max(connections.most, ++connections.open);
    socket.on('close', () => connections.open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://${auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : ''}127.0.0.1:${port}${opts.tls ? '?rejectUnauthorized=false' : ''}`,
    messages,
    commands,
    waitFor(n, timeoutMs = 10_000) {
      if (messages.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`sink has ${messages.length} of ${n} messages after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    failNext(count, reply = '550 rejected by test sink') {
      failures = count;
      failReply = reply;
    },
    failFor(address, count, reply = '421 4.7.0 Try again later, closing connection') {
      refusals.set(address.toLowerCase(), { left: count, reply });
    },
    attempts,
    holdFor(address) {
      let arrived!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((r) => {
        arrived = r;
      });
      holds.set(address.toLowerCase(), { arrived, gate: new Promise<void>((r) => (release = r)) });
      return { reached, release };
    },
    connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** an error smtp-server answers with: it writes `<responseCode> <message>` */
function smtpError(reply: string): Error {
  const [code, ...words] = reply.split(' ');
  return Object.assign(new Error(words.join(' ')), { responseCode: Number(code) });
}
