import { randomBytes } from 'node:crypto';
import { asciiDomain } from './address.ts';
import { formatDate, qpEncode } from './encoding.ts';
import { headerField } from './header-fold.ts';

/**
 * A minimal RFC 5322/2045 writer for what notify sends: text/plain, or multipart/alternative of
 * text/plain and text/html, UTF-8, quoted-printable. Bodies arrive as already-encoded pieces so a
 * campaign's static markup is encoded once and spliced per recipient (see encoding.ts).
 */
export interface MimeHeaders {
  from: string;
  to: string[];
  cc?: string[];
  subject: string;
  date: number;
  messageId: string;
  /** custom and List-Unsubscribe headers, values already free of CR/LF */
  headers: Record<string, string>;
}

const CRLF = '\r\n';

export function newBoundary(): string {
  // "=_" can never occur in quoted-printable output, so the boundary cannot collide with a body
  return `notify_=_${randomBytes(12).toString('base64url')}`;
}

export function headerBlock(h: MimeHeaders, field: (name: string, value: string) => string = headerLine): string {
  let out = field('From', h.from);
  if (h.to.length) out += headerLine('To', h.to.length === 1 ? asciiDomain(h.to[0]) : h.to.map(asciiDomain).join(', '));
  if (h.cc?.length) out += headerLine('Cc', h.cc.map(asciiDomain).join(', '));
  out += field('Subject', h.subject);
  out += `Date: ${formatDate(h.date)}${CRLF}${headerLine('Message-ID', h.messageId)}`;
  for (const name in h.headers) out += field(name, h.headers[name]);
  return `${out}MIME-Version: 1.0${CRLF}`;
}

const headerLine = (name: string, value: string) => headerField(name, value) + CRLF;

/**
 * headerBlock's folding for the recipients of one compiled message: From, Subject and the custom
 * headers are the same from one recipient to the next, so each line is folded once per value.
 */
export function headerBlocks(): (h: MimeHeaders) => string {
  const last = new Map<string, { value: string; line: string }>();
  const field = (name: string, value: string) => {
    const seen = last.get(name);
    if (seen !== undefined && seen.value === value) return seen.line;
    const line = headerLine(name, value);
    last.set(name, { value, line });
    return line;
  };
  return (h) => headerBlock(h, field);
}

const TEXT_PART = `Content-Type: text/plain; charset=utf-8${CRLF}Content-Transfer-Encoding: quoted-printable${CRLF}${CRLF}`;
const HTML_PART = `Content-Type: text/html; charset=utf-8${CRLF}Content-Transfer-Encoding: quoted-printable${CRLF}${CRLF}`;

/** The fixed framing around the bodies, built once per compiled message (7-bit text). */
export interface Framing {
  /** after the header block, before the text part */
  beforeText: string;
  /** between text and html parts (multipart only) */
  beforeHtml: string | null;
  end: string;
}

export function framing(multipart: boolean, boundary = newBoundary()): Framing {
  if (!multipart) return { beforeText: TEXT_PART, beforeHtml: null, end: '' };
  return {
    beforeText: `Content-Type: multipart/alternative; boundary="${boundary}"${CRLF}${CRLF}--${boundary}${CRLF}${TEXT_PART}`,
    beforeHtml: `${CRLF}--${boundary}${CRLF}${HTML_PART}`,
    end: `${CRLF}--${boundary}--${CRLF}`,
  };
}

/**
 * Header block + framing + the quoted-printable parts, written into one buffer: the header block
 * as UTF-8 (an SMTPUTF8 address may be in it), the rest as the 7-bit text it is. The parts are
 * ropes of many small pieces; writing one copies each piece once, with no intermediate buffers.
 */
export function assemble(headers: string, f: Framing, text: string, html: string | null): Buffer {
  const body = html !== null && f.beforeHtml !== null ? f.beforeText + text + f.beforeHtml + html + f.end : f.beforeText + text + f.end;
  const head = Buffer.byteLength(headers, 'utf8');
  const out = Buffer.allocUnsafe(head + body.length);
  out.write(headers, 0, head, 'utf8');
  out.write(body, head, body.length, 'latin1');
  return out;
}

/** A whole message from strings, for mailers handed a message without `raw`. */
export function composeMime(h: MimeHeaders, text: string | undefined, html: string | undefined): Buffer {
  const f = framing(html !== undefined);
  return assemble(headerBlock(h), f, qpEncode(text ?? '', true).toString('latin1'), html === undefined ? null : qpEncode(html, true).toString('latin1'));
}
