import type { ImapFlow } from 'imapflow';
import { NotifyError } from '../errors.ts';
import type { MailboxLog } from './mailbox-contract.ts';
import type { MailboxTarget } from './mailbox-url.ts';

/**
 * A logged-in IMAP connection. A refused login is the operator's to fix (CONFIG_INVALID); a server
 * that does not answer may answer later (STORE_UNAVAILABLE, the worker tries again next interval).
 */
export async function connectMailbox(target: MailboxTarget, timeoutMs: number, log: MailboxLog): Promise<ImapFlow> {
  // Loaded on first use, not at start-up: only the bounce mailbox speaks IMAP.
  const { ImapFlow } = await import('imapflow');
  const client = new ImapFlow({
    host: target.host,
    port: target.port,
    secure: target.secure,
    auth: { user: target.user, pass: target.pass },
    logger: false,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    disableAutoIdle: true,
  });
  // A dropped connection also surfaces as a rejected command; this keeps it from being an uncaught 'error'.
  client.on('error', (err: Error) => log.warn({ err, mailbox: target.label }, 'bounce mailbox connection error'));
  try {
    await client.connect();
    return client;
  } catch (err) {
    client.close();
    const e = err as { authenticationFailed?: boolean; responseText?: string; message?: string };
    if (e.authenticationFailed) {
      throw new NotifyError('CONFIG_INVALID', `Bounce mailbox login failed for ${target.label}: ${e.responseText || e.message}`, { mailbox: target.label }, { cause: err });
    }
    throw new NotifyError('STORE_UNAVAILABLE', `Bounce mailbox ${target.label} is unreachable: ${e.message}`, { mailbox: target.label }, { cause: err });
  }
}
