import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';

export interface SmtpProbeOptions {
  host: string;
  port: number;
  /** implicit TLS (smtps) */
  secure: boolean;
  /** EHLO name; default the machine's host name when it has a dot, else `[127.0.0.1]` as nodemailer says */
  name?: string;
  rejectUnauthorized?: boolean;
  /** for the whole conversation; default 10 s */
  timeoutMs?: number;
}

/** An error with a code the failure classifier knows: a connection error is transient. */
function probeError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The SMTP service extensions a server offers (RFC 5321 4.1.1.1), from its EHLO answer, upper case
 * keywords without their arguments. When the server offers STARTTLS on a plain connection the
 * answer taken is the one after TLS (RFC 3207: what was said before TLS is to be forgotten).
 * nodemailer keeps the extensions it read in a private field, so the probe talks for itself: a
 * greeting, EHLO, maybe STARTTLS and EHLO again, QUIT.
 */
export async function smtpExtensions(o: SmtpProbeOptions): Promise<Set<string>> {
  const name = o.name || (os.hostname().includes('.') ? os.hostname() : '[127.0.0.1]');
  let socket: net.Socket = o.secure ? tls.connect({ host: o.host, port: o.port, servername: net.isIP(o.host) ? undefined : o.host, rejectUnauthorized: o.rejectUnauthorized !== false }) : net.connect({ host: o.host, port: o.port });
  const timer = setTimeout(() => socket.destroy(probeError(`SMTP server ${o.host}:${o.port} did not answer EHLO in time`, 'ETIMEDOUT')), o.timeoutMs ?? 10_000);
  let reader = replies(socket);
  try {
    await expect(reader, 220, 'greeting');
    socket.write(`EHLO ${name}\r\n`);
    let ehlo = await reader.next();
    if (ehlo.code !== 250) return new Set();
    let extensions = keywords(ehlo.lines);
    if (!o.secure && extensions.has('STARTTLS')) {
      socket.write('STARTTLS\r\n');
      await expect(reader, 220, 'STARTTLS');
      reader.stop();
      // from here the TLS socket reports the errors of the connection under it
      socket.on('error', () => {});
      socket = await upgrade(socket, o);
      reader = replies(socket);
      socket.write(`EHLO ${name}\r\n`);
      ehlo = await reader.next();
      if (ehlo.code !== 250) return new Set();
      extensions = keywords(ehlo.lines);
    }
    socket.write('QUIT\r\n');
    return extensions;
  } finally {
    clearTimeout(timer);
    reader.stop();
    socket.end();
    socket.destroy();
  }
}

function keywords(lines: string[]): Set<string> {
  // the first line is the server's name; each one after it an extension and its arguments
  return new Set(lines.slice(1).map((l) => l.split(' ')[0].toUpperCase()));
}

async function expect(reader: ReplyReader, code: number, what: string): Promise<void> {
  const reply = await reader.next();
  if (reply.code !== code) throw probeError(`SMTP server answered ${what} with ${reply.code} ${reply.lines.join(' ')}`.trim(), 'EPROTOCOL');
}

function upgrade(socket: net.Socket, o: SmtpProbeOptions): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = tls.connect({ socket, servername: net.isIP(o.host) ? undefined : o.host, rejectUnauthorized: o.rejectUnauthorized !== false }, () => resolve(secure));
    secure.once('error', reject);
  });
}

interface Reply {
  code: number;
  lines: string[];
}
interface ReplyReader {
  next(): Promise<Reply>;
  stop(): void;
}

/** Multi-line replies (`250-...` then `250 ...`) read off the socket one at a time. */
function replies(socket: net.Socket): ReplyReader {
  let buffer = '';
  let lines: string[] = [];
  const ready: Reply[] = [];
  let waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void } | undefined;
  let failed: Error | undefined;
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    // an answer can only be this long by mistake: refuse rather than keep reading
    if (buffer.length > 64 * 1024) return onError(probeError('SMTP server answer too long', 'EPROTOCOL'));
    let end = buffer.indexOf('\n');
    while (end >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, '');
      buffer = buffer.slice(end + 1);
      lines.push(line.slice(4));
      if (line[3] !== '-') {
        const reply = { code: Number(line.slice(0, 3)) || 0, lines };
        lines = [];
        if (waiting) {
          waiting.resolve(reply);
          waiting = undefined;
        } else ready.push(reply);
      }
      end = buffer.indexOf('\n');
    }
  };
  const onError = (err: Error) => {
    failed ??= Object.assign(err, { code: (err as { code?: string }).code ?? 'ECONNECTION' });
    waiting?.reject(failed);
    waiting = undefined;
  };
  const onClose = () => onError(probeError('SMTP server closed the connection', 'ECONNECTION'));
  socket.on('data', onData);
  socket.on('error', onError);
  socket.on('close', onClose);
  return {
    next() {
      const reply = ready.shift();
      if (reply) return Promise.resolve(reply);
      if (failed) return Promise.reject(failed);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
      });
    },
    stop() {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
    },
  };
}
