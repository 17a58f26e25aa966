import { whereToSet } from '../config.ts';
import { NotifyError } from '../errors.ts';
import { asciiDomain } from '../mail/address.ts';
import { formatAddress } from '../mail/encoding.ts';
import { unfoldableWord } from '../mail/header-fold.ts';
import { isValidEmail } from './email.ts';
import { fromAddressProblem } from './header-limits.ts';

/**
 * Header safety. A CR or LF in a header value would let input add headers or recipients (header
 * injection); such a value is refused with HEADER_INJECTION and nothing is sent.
 */
export function assertHeaderValue(field: string, value: string): void {
  if (/[\r\n\0]/.test(value)) {
    throw new NotifyError('HEADER_INJECTION', `${field} contains a line break (CR/LF); refused to send`, { field });
  }
}

const NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]{1,76}$/;
/** headers notify writes itself; setting them would produce a broken or misleading message */
const RESERVED = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'date', 'message-id', 'mime-version', 'content-type', 'content-transfer-encoding', 'sender', 'reply-to-all']);

/** Validated copy of custom headers. List-Unsubscribe given here is kept as-is: the sender's own unsubscribe handling wins. */
export function checkHeaders(headers: unknown): Record<string, string> {
  if (headers === undefined || headers === null) return {};
  if (typeof headers !== 'object' || Array.isArray(headers)) throw new NotifyError('INVALID_INPUT', 'headers must be an object of name -> value', { field: 'headers' });
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    assertHeaderValue('header name', name);
    if (!NAME.test(name)) throw new NotifyError('INVALID_INPUT', `Invalid header name ${JSON.stringify(name)}`, { field: 'headers', header: name });
    const lower = name.toLowerCase();
    if (RESERVED.has(lower)) throw new NotifyError('INVALID_INPUT', `Header ${name} is set by notify and cannot be given`, { field: 'headers', header: name });
    if (seen.has(lower)) throw new NotifyError('INVALID_INPUT', `Header ${name} is given twice`, { field: 'headers', header: name });
    seen.add(lower);
    if (typeof value !== 'string') throw new NotifyError('INVALID_INPUT', `Header ${name} must be a string`, { field: 'headers', header: name });
    assertHeaderValue(`header ${name}`, value);
    if (value.length > 900) throw new NotifyError('INVALID_INPUT', `Header ${name} is longer than 900 characters`, { field: 'headers', header: name });
    const unfoldable = unfoldableWord(name, value);
    if (unfoldable) {
      const { word, room } = unfoldable;
      throw new NotifyError('INVALID_INPUT', `Header ${name} has a word of ${word.length} characters with no white space to fold at (${JSON.stringify(word.slice(0, 24))}...); at most ${room} fit its place on a 78-character header line: add spaces or shorten it`, { field: 'headers', header: name });
    }
    out[name] = value;
  }
  return out;
}

export function hasHeader(headers: Record<string, string>, name: string): boolean {
  const lower = name.toLowerCase();
  return Object.keys(headers).some((k) => k.toLowerCase() === lower);
}

/** The From header value; the campaign's (or call's) own values beat the config defaults. */
export function formatFrom(name: string | null | undefined, email: string | null | undefined): { header: string; address: string } {
  const address = (email ?? '').trim();
  if (!address) throw new NotifyError('MISSING_SENDER', `No from address: set the fromEmail option (${whereToSet('fromEmail')}) or give this campaign or message its own fromEmail`, { field: 'fromEmail' });
  assertHeaderValue('fromEmail', address);
  if (!isValidEmail(address)) throw new NotifyError('INVALID_EMAIL', `Invalid from address ${JSON.stringify(address)}`, { field: 'fromEmail' });
  const tooLong = fromAddressProblem(asciiDomain(address));
  if (tooLong) throw new NotifyError('INVALID_INPUT', `From address ${JSON.stringify(address)} ${tooLong}`, { field: 'fromEmail' });
  if (name) {
    assertHeaderValue('fromName', name);
    if (name.length > 200) throw new NotifyError('INVALID_INPUT', 'fromName is longer than 200 characters', { field: 'fromName' });
  }
  return { header: formatAddress(address, name || null), address };
}

export function checkSubject(subject: unknown): string {
  if (typeof subject !== 'string' || subject.trim() === '') throw new NotifyError('INVALID_INPUT', 'subject is required', { field: 'subject' });
  assertHeaderValue('subject', subject);
  if (subject.length > 900) throw new NotifyError('INVALID_INPUT', 'subject is longer than 900 characters', { field: 'subject' });
  return subject;
}
