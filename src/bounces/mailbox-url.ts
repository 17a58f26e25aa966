import { NotifyError } from '../errors.ts';

export interface MailboxTarget {
  host: string;
  port: number;
  /** TLS from the first byte (imaps:); imap: upgrades with STARTTLS when the server offers it */
  secure: boolean;
  user: string;
  pass: string;
  /** the folder to read, INBOX unless the URL's path names another */
  path: string;
  /** user@host:port/path, for logs and errors: never the password */
  label: string;
}

/** `imaps://user:pass@host:993/INBOX` or `imap://...`; anything else is CONFIG_INVALID (the password is never echoed). */
export function parseMailboxUrl(url: string): MailboxTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new NotifyError('CONFIG_INVALID', 'bounceMailbox is not a URL (expected imaps://user:pass@host:993/INBOX)');
  }
  const secure = u.protocol === 'imaps:';
  if (!secure && u.protocol !== 'imap:') throw new NotifyError('CONFIG_INVALID', `bounceMailbox must be an imaps:// or imap:// URL, not ${u.protocol}//`);
  if (!u.hostname) throw new NotifyError('CONFIG_INVALID', 'bounceMailbox has no host');
  const user = decodeURIComponent(u.username);
  const pass = decodeURIComponent(u.password);
  if (!user || !pass) throw new NotifyError('CONFIG_INVALID', 'bounceMailbox needs a user and a password (imaps://user:pass@host/INBOX)');
  const port = u.port ? Number(u.port) : secure ? 993 : 143;
  const path = decodeURIComponent(u.pathname.replace(/^\/+/, '')) || 'INBOX';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return { host, port, secure, user, pass, path, label: `${user}@${u.host}/${path}` };
}
