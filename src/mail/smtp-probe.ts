import { SmtpSession } from './smtp-session.ts';

export interface SmtpProbeOptions {
  host: string;
  port: number;
  /** implicit TLS (smtps) */
  secure: boolean;
  /** EHLO name; default the machine's host name when it has a dot, else `[127.0.0.1]` */
  name?: string;
  rejectUnauthorized?: boolean;
  /** for each step (connect, greeting, each answer); default 10 s */
  timeoutMs?: number;
}

/**
 * The SMTP service extensions a server offers (RFC 5321 4.1.1.1), from its EHLO answer, upper case
 * keywords without their arguments, on a connection of its own that sends no mail. When the server
 * offers STARTTLS on a plain connection the answer taken is the one after TLS (RFC 3207: what was
 * said before TLS is to be forgotten). A server that only knows HELO offers none.
 */
export async function smtpExtensions(o: SmtpProbeOptions): Promise<Set<string>> {
  const ms = o.timeoutMs ?? 10_000;
  const session = await SmtpSession.open({ ...o, connectTimeoutMs: ms, greetingTimeoutMs: ms, commandTimeoutMs: ms });
  try {
    return session.extensions;
  } finally {
    await session.quit();
  }
}
