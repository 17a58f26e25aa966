import { isAscii } from 'node:buffer';

/**
 * SMTP DATA transparency (RFC 5321 4.5.2): a line that begins with `.` gets a second one, and every
 * line ends in CRLF (a bare LF becomes CRLF, as nodemailer does; a server may refuse bare LFs).
 * A message comes as a list of buffers of which most are shared by every recipient of a campaign,
 * so each part is stuffed on its own, once for a shared part (kept beside it), and what depends on
 * the part before it (is its first byte at the start of a line?) is decided when the parts are
 * put in order. Nothing is joined per recipient: the result is a list to write with writev.
 */
const LF = 10;
const CR = 13;
const DOT = 46;

const DOT_BUF = Buffer.from('.');
const CR_BUF = Buffer.from('\r');
/** the end of DATA after a message that ended its last line, and after one that did not */
const END = Buffer.from('.\r\n');
const CRLF_END = Buffer.from('\r\n.\r\n');

interface Stuffed {
  /** the part with its inner line starts stuffed and bare LFs made CRLF (its first byte left as it is) */
  bytes: Buffer;
  eightBit: boolean;
}

/**
 * Parts this long are kept stuffed beside the part (a shared part is met once per recipient);
 * shorter ones cost less to stuff again than to look up.
 */
const KEEP_FROM = 128;
const kept = new WeakMap<Buffer, Stuffed>();

export interface DataBody {
  /** the buffers to write after the server's 354, the terminating `.` line included */
  buffers: Buffer[];
  /** some byte is not 7-bit (BODY=8BITMIME is due) */
  eightBit: boolean;
}

/** The DATA content of a message given as parts in order (the end-of-data line included). */
export function dataBody(parts: readonly Buffer[]): DataBody {
  const buffers: Buffer[] = [];
  let lineStart = true;
  let afterCr = false;
  let eightBit = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part.length === 0) continue;
    const s = stuffedOf(part, i > 0);
    const first = part[0];
    if (first === DOT && lineStart) buffers.push(DOT_BUF);
    else if (first === LF && !afterCr) buffers.push(CR_BUF);
    buffers.push(s.bytes);
    if (s.eightBit) eightBit = true;
    const last = part[part.length - 1];
    lineStart = last === LF;
    afterCr = last === CR;
  }
  buffers.push(lineStart ? END : CRLF_END);
  return { buffers, eightBit };
}

function stuffedOf(part: Buffer, keepable: boolean): Stuffed {
  if (!keepable || part.length < KEEP_FROM) return stuff(part);
  let s = kept.get(part);
  if (s === undefined) {
    s = stuff(part);
    kept.set(part, s);
  }
  return s;
}

/** stuffs the line starts after each LF inside the part; returns the part itself when none needs it */
export function stuff(part: Buffer): Stuffed {
  const eightBit = !isAscii(part);
  let at = part.indexOf(LF);
  if (at < 0) return { bytes: part, eightBit };
  const pieces: Buffer[] = [];
  let from = 0;
  while (at >= 0) {
    if (at > 0 && part[at - 1] !== CR) {
      pieces.push(part.subarray(from, at), CR_BUF);
      from = at;
    }
    if (part[at + 1] === DOT) {
      pieces.push(part.subarray(from, at + 1), DOT_BUF);
      from = at + 1;
    }
    at = part.indexOf(LF, at + 1);
  }
  if (pieces.length === 0) return { bytes: part, eightBit };
  pieces.push(part.subarray(from));
  return { bytes: Buffer.concat(pieces), eightBit };
}
