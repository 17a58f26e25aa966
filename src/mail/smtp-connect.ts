import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import { connectionError, SmtpError } from './smtp-reply.ts';

export interface SmtpSessionOptions {
  host: string;
  port: number;
  /** implicit TLS (smtps) */
  secure: boolean;
  /** EHLO name; default the machine's host name when it has a dot, else `[127.0.0.1]` as nodemailer says */
  name?: string;
  rejectUnauthorized?: boolean;
  auth?: { user: string; pass: string };
  /** TCP (and TLS) connect; default 30 s */
  connectTimeoutMs?: number;
  /** the server's 220 after connecting; default 30 s */
  greetingTimeoutMs?: number;
  /** silence while an answer is awaited; default 60 s */
  commandTimeoutMs?: number;
}

export function defaultName(): string {
  const host = os.hostname();
  return host.includes('.') ? host : '[127.0.0.1]';
}

const servername = (host: string) => (net.isIP(host) ? undefined : host);

/** a TCP (or TLS for smtps) connection with Nagle's algorithm off: the end of DATA is a small write */
export function connect(o: SmtpSessionOptions): Promise<net.Socket> {
  const ms = o.connectTimeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const socket = o.secure
      ? tls.connect({ host: o.host, port: o.port, servername: servername(o.host), rejectUnauthorized: o.rejectUnauthorized !== false })
      : net.connect({ host: o.host, port: o.port, noDelay: true });
    socket.setNoDelay(true);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const onError = (err: Error) => fail(connectionError(err, o.host));
    const timer = setTimeout(() => fail(new SmtpError(`SMTP connection to ${o.host}:${o.port} not made within ${ms} ms`, 'ETIMEDOUT')), ms);
    socket.once('error', onError);
    socket.once(o.secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/** STARTTLS (RFC 3207): TLS over the connection already made, with Nagle's algorithm off as on the plain one */
export async function startTls(plain: net.Socket, o: SmtpSessionOptions): Promise<tls.TLSSocket> {
  // the TLS socket reports the errors of the connection under it from here on
  plain.on('error', () => {});
  const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
    const s = tls.connect({ socket: plain, servername: servername(o.host), rejectUnauthorized: o.rejectUnauthorized !== false }, () => resolve(s));
    s.once('error', (err) => reject(connectionError(err, o.host)));
  });
  secure.setNoDelay(true);
  plain.setTimeout(0);
  return secure;
}
