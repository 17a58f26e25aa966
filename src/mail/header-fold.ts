/**
 * Header fields written within 78 characters a line (RFC 5322 2.1.1), folded only where folding
 * white space may go, so that unfolding gives back the value exactly:
 * - unstructured text (Subject, a custom X- header): at spaces; when it is not printable ASCII, or a
 *   word would not fit a line, as RFC 2047 encoded words sized so each line holds one;
 * - structured values (addresses, List-*, Feedback-ID, Message-ID, Return-Path): at their spaces
 *   only, never encoded and never broken inside a token. A token longer than the rest of the first
 *   line goes whole on a line of its own, after a fold right after the colon. One longer than any
 *   line (a List-Unsubscribe URL on a host over 41 characters) stays whole there: RFC 2369 lets no
 *   white space inside its angle brackets, and 998 characters is the hard limit (nodemailer and
 *   Python's email package do the same). The values notify makes are held short enough for a line
 *   by core/header-limits.ts.
 */
export const MAX_LINE = 78;
const CRLF = '\r\n';
const PRINTABLE = /^[\x20-\x7e]*$/;
const BLANK = /[ \t]/;
const STRUCTURED = /^(list-|feedback-id$|message-id$|in-reply-to$|references$|reply-to$|sender$|from$|to$|cc$|auto-submitted$|precedence$|return-path$)/i;

/** `Name: value` folded, without the final CRLF. */
export function headerField(name: string, value: string): string {
  if (!BLANK.test(value)) {
    // one token (an address, a Message-ID, a List-Unsubscribe URL: most per-recipient values):
    // what pack would make of it, without splitting it into tokens
    const fits = name.length + 2 + value.length <= MAX_LINE;
    if (STRUCTURED.test(name)) return fits ? `${name}: ${value}` : `${name}:${CRLF} ${value}`;
    if (fits && PRINTABLE.test(value)) return `${name}: ${value}`;
  }
  // a structured value is never encoded: its non-ASCII parts (an SMTPUTF8 local part, a display
  // name already made encoded words by formatAddress) are written as they are (RFC 6532)
  if (STRUCTURED.test(name)) return pack(name, ` ${value}`, true);
  if (PRINTABLE.test(value) && fitsUnencoded(name, value)) return pack(name, ` ${value}`, false);
  return pack(name, ` ${encodedWords(value, MAX_LINE - name.length - 2).join(' ')}`, false);
}

/** every word of the value fits a line of its own, the first one after the name */
function fitsUnencoded(name: string, value: string): boolean {
  const words = value.split(' ');
  return words.every((w, i) => (i === 0 ? name.length + 2 + w.length : 1 + w.length) <= MAX_LINE);
}

/**
 * Tokens (each with the white space before it) joined greedily into lines; a fold goes before a
 * token, so its white space starts the next line. A structured value may fold right after the
 * colon when its first token does not fit there.
 */
function pack(name: string, value: string, structured: boolean): string {
  const tokens = value.match(/[ \t]*[^ \t]+|[ \t]+$/g) ?? [];
  let out = '';
  let line = `${name}:`;
  let first = true;
  for (const token of tokens) {
    const blank = token.trim() === '';
    const fits = line.length + token.length <= MAX_LINE;
    // a structured value may fold right after the colon; a token too long for any line then still
    // gets the shortest line it can have (its own), so the limit a URL can reach is known
    const foldable = !first || structured;
    if (!blank && !fits && foldable) {
      out += line + CRLF;
      line = first ? ` ${token.trimStart()}` : token;
    } else line += token;
    first = false;
  }
  return out + line;
}

const ENCODED_OVERHEAD = '=?UTF-8?B??='.length;

/**
 * RFC 2047 B-encoded words, whole characters each, every word at most 75 characters (RFC 2047 2)
 * and the first at most `firstRoom`, so `Name: word` and each ` word` line stays within 78.
 */
export function encodedWords(value: string, firstRoom = 75): string[] {
  const bytesFor = (room: number) => Math.max(3, Math.floor((Math.min(room, 75) - ENCODED_OVERHEAD) / 4) * 3);
  const words: string[] = [];
  let chunk = '';
  let bytes = 0;
  let limit = bytesFor(firstRoom);
  const flush = () => {
    words.push(`=?UTF-8?B?${Buffer.from(chunk, 'utf8').toString('base64')}?=`);
    chunk = '';
    bytes = 0;
    limit = bytesFor(MAX_LINE - 1);
  };
  for (const ch of value) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > limit && chunk) flush();
    chunk += ch;
    bytes += n;
  }
  if (chunk || words.length === 0) flush();
  return words;
}
