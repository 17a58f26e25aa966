import { parseFields } from './fields.ts';

// The part a report returns the original message in: whole (RFC 3464 / RFC 5965) or headers only
// (RFC 6522 text/rfc822-headers), and their RFC 6532 internationalised forms.
const ORIGINAL_TYPES = ['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers'];

/**
 * The header section of the returned original message in a multipart/report, read from the raw
 * bytes: mailparser folds an *inline* message/rfc822 part (as feedback reports send it) into the
 * report's text and keeps none of its headers, yet its Return-Path is what names our send. Only
 * the report's own (top-level) parts are looked at. Empty when the report returns no original.
 */
export function originalHeaderBlock(source: Buffer, boundary: string): string {
  const text = source.toString('latin1');
  const delimiter = `--${boundary}`;
  const parts: string[] = [];
  let current: string[] | undefined;
  for (const line of text.split(/\r?\n/)) {
    const rest = line.startsWith(delimiter) ? line.slice(delimiter.length) : undefined;
    if (rest !== undefined && /^(--)?[ \t]*$/.test(rest)) {
      if (current) parts.push(current.join('\n'));
      if (rest.startsWith('--')) break;
      current = [];
      continue;
    }
    current?.push(line);
  }
  for (const part of parts) {
    const split = part.search(/\n[ \t]*\n/);
    const head = split < 0 ? part : part.slice(0, split);
    const body = split < 0 ? '' : part.slice(split).replace(/^\s*\n/, '');
    const fields = parseFields(head);
    const type = (fields.get('content-type')?.[0] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!ORIGINAL_TYPES.includes(type)) continue;
    return decode(body, (fields.get('content-transfer-encoding')?.[0] ?? '').trim().toLowerCase());
  }
  return '';
}

/** Only the header part of a headers-only part may be encoded (message/rfc822 may not: RFC 2046 5.2.1). */
function decode(body: string, encoding: string): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('latin1');
  if (encoding === 'quoted-printable') {
    return body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
  return body;
}
