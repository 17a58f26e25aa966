import { domainToASCII } from 'node:url';
import { NotifyError } from '../errors.ts';

/**
 * International addresses on the wire. A non-ASCII domain is written as punycode (IDNA, node's
 * domainToASCII) in headers and in the SMTP envelope, which every server accepts. A non-ASCII local
 * part has no ASCII form: it can only travel over a server that offers SMTPUTF8 (RFC 6531).
 */
const NON_ASCII = /[^\x00-\x7f]/;

/** The address with its domain as punycode; an ASCII address comes back as it is. */
export function asciiDomain(address: string): string {
  if (!NON_ASCII.test(address)) return address;
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const domain = address.slice(at + 1);
  if (!NON_ASCII.test(domain)) return address;
  const ascii = domainToASCII(domain);
  if (!ascii) throw new NotifyError('INVALID_EMAIL', `The domain of ${JSON.stringify(address)} is not a valid international domain name`, { email: address });
  return `${address.slice(0, at)}@${ascii}`;
}

/** true when the part before the @ is not ASCII: only an SMTPUTF8 server can take it */
export function needsSmtpUtf8(address: string): boolean {
  const at = address.lastIndexOf('@');
  return NON_ASCII.test(at < 0 ? address : address.slice(0, at));
}

/** The SMTPUTF8_REQUIRED error for a transport that cannot carry these addresses. */
export function smtpUtf8Required(addresses: string[], transport: string): NotifyError {
  const which = addresses.filter(needsSmtpUtf8);
  const why = `${which.join(', ')} has a non-ASCII local part, which needs a server that offers SMTPUTF8; ${transport} does not`;
  return new NotifyError('SMTPUTF8_REQUIRED', why, { addresses: which, transport });
}
