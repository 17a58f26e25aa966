/**
 * Header fields written within 78 characters a line (RFC 5322 2.1.1), folded only where folding
 * white space may go, so that unfolding gives back the value (or, inside a List-* URL, the value
 * with white space its readers drop):
 * - unstructured text (Subject, a custom X- header): at spaces; when it is not printable ASCII, or a
 *   word would not fit a line, as RFC 2047 encoded words sized so each line holds one (a custom
 *   header whose ASCII word would need that is refused before, see unfoldableWord);
 * - structured values (addresses, List-*, Feedback-ID, Message-ID, Return-Path): at their spaces
 *   only, never encoded. A token longer than the rest of the first line goes whole on a line of its
 *   own, after a fold right after the colon. One longer than any line stays whole there (998 is
 *   the hard limit), except an angle-bracket URL of a List-* header (a List-Unsubscribe on a long
 *   tracking host): that one is folded inside its brackets (listUrlPieces). The other values notify
 *   makes are held short enough for a line by core/header-limits.ts.
 */
export const MAX_LINE = 78;
const CRLF = '\r\n';
const PRINTABLE = /^[\x20-\x7e]*$/;
const BLANK = /[ \t]/;
const STRUCTURED = /^(list-|feedback-id$|message-id$|in-reply-to$|references$|reply-to$|sender$|from$|to$|cc$|auto-submitted$|precedence$|return-path$)/i;
/** the RFC 2369 fields, whose angle-bracket URLs may be folded inside (not List-Id: RFC 2919 has no white space in its <...>) */
const LIST = /^list-(help|unsubscribe|subscribe|post|owner|archive)$/i;

/** `Name: value` folded, without the final CRLF. */
export function headerField(name: string, value: string): string {
  if (!BLANK.test(value)) {
    // one token (an address, a Message-ID, a List-Unsubscribe URL: most per-recipient values):
    // what pack would make of it, without splitting it into tokens
    const fits = name.length + 2 + value.length <= MAX_LINE;
    if (STRUCTURED.test(name)) {
      // one List-* URL too long for a line of its own (every List-Unsubscribe of a long tracking host)
      const pieces = fits ? undefined : LIST.test(name) && listUrlPieces(value);
      if (pieces) return `${name}:${CRLF} ${pieces.join(`${CRLF} `)}`;
      return fits ? `${name}: ${value}` : `${name}:${CRLF} ${value}`;
    }
    if (fits && PRINTABLE.test(value)) return `${name}: ${value}`;
  }
  // a structured value is never encoded: its non-ASCII parts (an SMTPUTF8 local part, a display
  // name already made encoded words by formatAddress) are written as they are (RFC 6532)
  if (STRUCTURED.test(name)) return pack(name, ` ${value}`, true);
  if (PRINTABLE.test(value) && fitsUnencoded(name, value)) return pack(name, ` ${value}`, false);
  return pack(name, ` ${encodedWords(value, MAX_LINE - name.length - 2).join(' ')}`, false);
}

/**
 * The first word of a value that headerField could not write within 78 characters as it is, and
 * the room its line had: a structured value's word (but an RFC 2369 angle-bracket URL, folded inside
 * its brackets) would make a longer line, and a printable ASCII text's would be turned into encoded
 * words, which a provider reading the header (an X-Mailgun-Variables, an X-SES-CONFIGURATION-SET)
 * would not decode. Undefined when every word fits; other text is encoded words sized for their lines.
 */
export function unfoldableWord(name: string, value: string): { word: string; room: number } | undefined {
  const structured = STRUCTURED.test(name);
  if (!structured && !PRINTABLE.test(value)) return undefined;
  const tokens = ` ${value}`.match(/[ \t]*[^ \t]+/g) ?? [];
  for (const [i, token] of tokens.entries()) {
    const word = token.trimStart();
    if (structured && LIST.test(name) && word.startsWith('<')) continue;
    // the first word shares the line with the name, unless a structured value folds after the colon
    const room = i === 0 && !structured ? MAX_LINE - name.length - token.length + word.length - 1 : MAX_LINE - (i === 0 ? 1 : token.length - word.length);
    if (word.length > room) return { word, room };
  }
  return undefined;
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
  const urls = structured && LIST.test(name);
  let out = '';
  let line = `${name}:`;
  let first = true;
  for (const token of tokens) {
    const blank = token.trim() === '';
    const pieces = urls && !blank ? listUrlPieces(token.trimStart()) : undefined;
    if (pieces) {
      // each piece on a line of its own, so no white space goes inside the URL but at a fold
      out += line + CRLF;
      for (const piece of pieces.slice(0, -1)) out += ` ${piece}${CRLF}`;
      line = ` ${pieces[pieces.length - 1]}`;
      first = false;
      continue;
    }
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

/**
 * An angle-bracket URL too long for a line of its own, as the pieces of a fold inside its brackets
 * (undefined for any other token). RFC 2369 2: the list header fields hold angle-bracket URLs "with
 * internal whitespace being ignored", and client applications "should treat any whitespace ... as
 * characters to ignore"; RFC 3986 appendix C: white space added "to break a long URI across lines
 * ... should be ignored when the URI is extracted", and "No whitespace should be introduced after a
 * hyphen". (RFC 2369's "MTAs MUST NOT insert whitespace within the brackets" is about relays
 * rewriting a header; notify writes it.) A line ends after the last `/`, `.`, `?`, `&` or `=` that
 * fits (never inside `://`), so the short one-click URL breaks before its token and the token
 * arrives whole; failing those, at the room left, never after `-`.
 */
function listUrlPieces(token: string): string[] | undefined {
  const room = MAX_LINE - 1;
  if (token[0] !== '<' || token.length <= room) return undefined;
  const pieces: string[] = [];
  let from = 0;
  while (token.length - from > room) {
    let cut = from + room;
    while (cut > from + 1 && !breaksAfter(token, cut)) cut--;
    if (cut === from + 1) {
      cut = from + room;
      while (cut > from + 1 && token[cut - 1] === '-') cut--;
    }
    pieces.push(token.slice(from, cut));
    from = cut;
  }
  pieces.push(token.slice(from));
  return pieces;
}

/** after a `/`, `.`, `?`, `&` or `=` that is not part of `://` or of a doubled character */
function breaksAfter(token: string, at: number): boolean {
  const c = token[at - 1];
  return '/.?&='.includes(c) && token[at] !== c && token[at] !== '>' && !(c === '/' && token[at - 2] === '/') && !(c === '/' && token[at - 2] === ':');
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
