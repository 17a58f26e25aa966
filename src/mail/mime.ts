import { randomBytes } from 'node:crypto';
import { encodeHeaderValue, formatDate, qpEncode } from './encoding.ts';

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

export function headerBlock(h: MimeHeaders): string {
  let out = `From: ${h.from}${CRLF}`;
  if (h.to.length) out += `To: ${h.to.join(', ')}${CRLF}`;
  if (h.cc?.length) out += `Cc: ${h.cc.join(', ')}${CRLF}`;
  out += `Subject: ${encodeHeaderValue(h.subject, 7)}${CRLF}`;
  out += `Date: ${formatDate(h.date)}${CRLF}Message-ID: ${h.messageId}${CRLF}`;
  for (const name in h.headers) out += `${name}: ${encodeHeaderValue(h.headers[name], name.length)}${CRLF}`;
  return `${out}MIME-Version: 1.0${CRLF}`;
}

const TEXT_PART = `Content-Type: text/plain; charset=utf-8${CRLF}Content-Transfer-Encoding: quoted-printable${CRLF}${CRLF}`;
const HTML_PART = `Content-Type: text/html; charset=utf-8${CRLF}Content-Transfer-Encoding: quoted-printable${CRLF}${CRLF}`;

/** The fixed framing around the bodies, built once per compiled message. */
export interface Framing {
  /** after the header block, before the text pieces */
  beforeText: Buffer;
  /** between text and html pieces (multipart only) */
  beforeHtml: Buffer | null;
  end: Buffer;
}

export function framing(multipart: boolean, boundary = newBoundary()): Framing {
  if (!multipart) return { beforeText: Buffer.from(TEXT_PART), beforeHtml: null, end: Buffer.alloc(0) };
  return {
    beforeText: Buffer.from(`Content-Type: multipart/alternative; boundary="${boundary}"${CRLF}${CRLF}--${boundary}${CRLF}${TEXT_PART}`),
    beforeHtml: Buffer.from(`${CRLF}--${boundary}${CRLF}${HTML_PART}`),
    end: Buffer.from(`${CRLF}--${boundary}--${CRLF}`),
  };
}

/** Header block + framing + encoded pieces, in one allocation. */
export function assemble(headers: string, f: Framing, text: Buffer[], html: Buffer[] | null): Buffer {
  const list: Buffer[] = [Buffer.from(headers, 'utf8'), f.beforeText, ...text];
  if (html && f.beforeHtml) list.push(f.beforeHtml, ...html);
  list.push(f.end);
  return Buffer.concat(list);
}

/**
 * The same for a dispatcher that already holds the pieces: `fill(list)` appends the text pieces,
 * then (multipart) `fillHtml(list)` the html ones; one copy into one buffer.
 */
export function assembleInto(headers: string, f: Framing, fillText: (list: Buffer[]) => number, fillHtml: ((list: Buffer[]) => number) | null): Buffer {
  const head = Buffer.from(headers, 'utf8');
  const list: Buffer[] = [head, f.beforeText];
  let bytes = head.length + f.beforeText.length + fillText(list);
  if (fillHtml && f.beforeHtml) {
    list.push(f.beforeHtml);
    bytes += f.beforeHtml.length + fillHtml(list);
  }
  list.push(f.end);
  return Buffer.concat(list, bytes + f.end.length);
}

/** A whole message from strings, for mailers handed a message without `raw`. */
export function composeMime(h: MimeHeaders, text: string | undefined, html: string | undefined): Buffer {
  const f = framing(html !== undefined);
  return assemble(headerBlock(h), f, [qpEncode(text ?? '', true)], html === undefined ? null : [qpEncode(html, true)]);
}
