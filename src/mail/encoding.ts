import { asciiDomain } from './address.ts';
import { encodedWords, MAX_LINE as HEADER_LINE } from './header-fold.ts';

/**
 * The two MIME encodings the dispatcher needs, written for splicing: quoted-printable bodies whose
 * pieces are encoded separately (once per compiled message) and joined per recipient (header
 * words are header-fold.ts's). Splicing works because every piece ends with a soft line break, so the next piece
 * starts at column 0 and no encoded line ever exceeds 76 characters.
 */
const MAX_LINE = 76;
const HEX = '0123456789ABCDEF';

function isLiteral(b: number): boolean {
  return (b >= 33 && b <= 60) || (b >= 62 && b <= 126);
}

/**
 * Quoted-printable (RFC 2045 6.7) of `text` with line breaks normalised to CRLF. When `splice` is
 * true the output ends with a soft line break so another piece may follow at column 0.
 */
export function qpEncode(text: string, splice = true): Buffer {
  const src = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(src.length * 3 + Math.ceil(src.length / 24) * 3 + 8);
  let o = 0;
  let col = 0;
  const softBreak = () => {
    out[o++] = 61;
    out[o++] = 13;
    out[o++] = 10;
    col = 0;
  };
  for (let i = 0; i < src.length; i++) {
    const b = src[i];
    if (b === 13 || b === 10) {
      if (b === 13 && src[i + 1] === 10) i++;
      out[o++] = 13;
      out[o++] = 10;
      col = 0;
      continue;
    }
    const next = src[i + 1];
    // whitespace right before a line end must be encoded: transports may strip it
    const atLineEnd = next === undefined ? !splice : next === 13 || next === 10;
    const literal = isLiteral(b) || ((b === 32 || b === 9) && !atLineEnd);
    const width = literal ? 1 : 3;
    if (col + width > MAX_LINE - 1) softBreak();
    if (literal) out[o++] = b;
    else {
      out[o++] = 61;
      out[o++] = HEX.charCodeAt(b >> 4);
      out[o++] = HEX.charCodeAt(b & 15);
    }
    col += width;
  }
  if (splice && col > 0) {
    out[o++] = 61;
    out[o++] = 13;
    out[o++] = 10;
  }
  return out.subarray(0, o);
}

/** Values made only of QP-literal ASCII and short enough for one line (tokens, signatures) skip the encoder. */
export function qpSpliceValue(value: string): Buffer {
  return Buffer.from(qpSpliceText(value), 'latin1');
}

const SPLICE_LITERAL = /^[A-Za-z0-9_.\-/:?]*$/;
// URL characters plus '=': an unsubscribe URL (`...?s=<token>`) is one of these for every recipient
const SPLICE_URL = /^[A-Za-z0-9_.\-/:?=&]*$/;

/** qpSpliceValue as a string (quoted-printable is 7-bit: one character per byte). */
export function qpSpliceText(value: string): string {
  if (value.length <= MAX_LINE - 1 && SPLICE_LITERAL.test(value)) return value.length ? `${value}=\r\n` : '';
  if (SPLICE_URL.test(value)) return qpUrlText(value);
  return qpEncode(value, true).toString('latin1');
}

/**
 * What qpEncode writes for a value of URL characters (an unsubscribe or preferences URL is one for
 * every recipient), made from slices of the string: '=' becomes =3D and lines break where the
 * encoder breaks them (75 columns and a soft break), without the byte buffers the general encoder
 * needs. Runs between two '=' are cut whole, not walked a character at a time.
 */
function qpUrlText(value: string): string {
  const room = MAX_LINE - 1;
  let out = '';
  let col = 0;
  let from = 0;
  while (from < value.length) {
    let equals = value.indexOf('=', from);
    if (equals === -1) equals = value.length;
    while (equals - from > room - col) {
      const cut = from + room - col;
      out += `${value.slice(from, cut)}=\r\n`;
      from = cut;
      col = 0;
    }
    out += value.slice(from, equals);
    col += equals - from;
    from = equals;
    if (equals === value.length) break;
    if (col + 3 > room) {
      out += '=\r\n';
      col = 0;
    }
    out += '=3D';
    col += 3;
    from = equals + 1;
  }
  return col > 0 ? `${out}=\r\n` : out;
}

const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;
const ATOM_SAFE = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~ ]*$/;

/**
 * `Name <address>`, or the bare address; the name quoted or made encoded words (sized for a From
 * line) as needed, the address's domain as punycode.
 */
export function formatAddress(address: string, name?: string | null): string {
  const addr = asciiDomain(address);
  if (!name) return addr;
  if (ASCII_PRINTABLE.test(name)) {
    const shown = ATOM_SAFE.test(name) ? name : `"${name.replace(/(["\\])/g, '\\$1')}"`;
    return `${shown} <${addr}>`;
  }
  return `${encodedWords(name, HEADER_LINE - 'From: '.length).join(' ')} <${addr}>`;
}

let lastSecond = Number.NaN;
let lastDate = '';

/** RFC 5322 date in UTC. A campaign stamps thousands of messages within one second: that second's text is kept. */
export function formatDate(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastDate = new Date(second * 1000).toUTCString().replace(/GMT$/, '+0000');
    lastSecond = second;
  }
  return lastDate;
}
