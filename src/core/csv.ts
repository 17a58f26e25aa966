import { NotifyError } from '../errors.ts';

/** One CSV record and the file line it starts on (a quoted field may span several lines). */
export interface CsvRecord {
  fields: string[];
  line: number;
  /**
   * The record's last field opened a quote that never closed (or grew past MAX_FIELD, which is how
   * an unclosed quote shows in a long file); reading stopped there.
   */
  unterminated?: boolean;
}

/** A field longer than this is an unclosed quote swallowing the file, not data: reading stops. */
export const MAX_FIELD = 1024 * 1024;

export type CsvEncoding = 'utf-8' | 'latin1';

/** a file stream, a generator of chunks, or an array of strings */
export type CsvSource = AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>;

/**
 * RFC 4180 CSV, read incrementally: quoted fields may hold commas, doubled quotes and line breaks;
 * CRLF or LF ends a record; a UTF-8 BOM is dropped. Memory stays at one record whatever the file size.
 */
export async function* parseCsvRecords(chunks: CsvSource, encoding: CsvEncoding = 'utf-8'): AsyncGenerator<CsvRecord> {
  let field = '';
  let fields: string[] = [];
  let quoted = false;
  let afterQuote = false;
  let line = 1;
  let start = 1;
  let first = true;
  for await (let text of decodeChunks(chunks, encoding)) {
    if (first) {
      text = text.replace(/^\uFEFF/, '');
      first = false;
    }
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (ch === '\n') line++;
      if (quoted) {
        if (ch === '"') {
          quoted = false;
          afterQuote = true;
        } else field += ch;
        if (field.length > MAX_FIELD) {
          yield { fields: [...fields, field.slice(0, 80)], line: start, unterminated: true };
          return;
        }
        continue;
      }
      if (ch === '"') {
        if (afterQuote) field += '"'; // "" inside quotes
        quoted = true;
        afterQuote = false;
        continue;
      }
      afterQuote = false;
      if (ch === ',') {
        fields.push(field);
        field = '';
      } else if (ch === '\n') {
        fields.push(field.endsWith('\r') ? field.slice(0, -1) : field);
        yield { fields, line: start };
        fields = [];
        field = '';
        start = line;
      } else field += ch;
    }
  }
  if (quoted) yield { fields: [...fields, field.slice(0, 80)], line: start, unterminated: true };
  else if (field !== '' || fields.length > 0) {
    fields.push(field.endsWith('\r') ? field.slice(0, -1) : field);
    yield { fields, line: start };
  }
}

/** The fields of each record (see parseCsvRecords). */
export async function* parseCsv(chunks: CsvSource): AsyncGenerator<string[]> {
  for await (const record of parseCsvRecords(chunks)) yield record.fields;
}

/** The fields of one line of CSV text (a cell that itself holds a comma-separated record, such as Mailchimp's TAGS). */
export async function parseCsvLine(text: string): Promise<string[]> {
  for await (const fields of parseCsv([text])) return fields;
  return [];
}

/**
 * Bytes to text across chunk boundaries (a multi-byte character may be split between two reads).
 * UTF-8 is strict: bytes that are not UTF-8 (a Latin-1 export from a spreadsheet) are an error
 * naming the line, never silently turned into replacement characters.
 */
export async function* decodeChunks(chunks: CsvSource, encoding: CsvEncoding = 'utf-8'): AsyncGenerator<string> {
  const decoder = new TextDecoder(encoding, { fatal: true });
  let lines = 1;
  // the bytes of a character the last chunk cut, which the decoder holds until the next chunk
  let held: Uint8Array = new Uint8Array(0);
  for await (const chunk of chunks) {
    if (typeof chunk === 'string') {
      yield chunk;
      continue;
    }
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      throw notUtf8(lines + linesBeforeBadByte(joined(held, chunk)));
    }
    // (a chunk of one or two bytes may continue the character held before it)
    if (encoding === 'utf-8') held = cutCharacter(joined(held, chunk.subarray(-3)));
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
    yield text;
  }
  try {
    const rest = decoder.decode();
    if (rest) yield rest;
  } catch {
    throw notUtf8(lines);
  }
}

function joined(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * The last bytes when they start a UTF-8 character they do not finish (at most 3: a lead byte and its
 * continuation bytes). Line breaks are single bytes, so these never hold one.
 */
function cutCharacter(bytes: Uint8Array): Uint8Array {
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 3); i--) {
    const b = bytes[i];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return bytes.length - i < size ? bytes.subarray(i) : new Uint8Array(0);
  }
  return new Uint8Array(0);
}

/**
 * Line breaks before the first byte that is not UTF-8 in the bytes of a chunk, with the start of a
 * character the chunk before it cut (so the error names the line the bad bytes are on).
 */
function linesBeforeBadByte(chunk: Uint8Array): number {
  const text = new TextDecoder('utf-8').decode(chunk);
  const bad = text.indexOf('\uFFFD');
  return (text.slice(0, bad === -1 ? text.length : bad).match(/\n/g) ?? []).length;
}

function notUtf8(line: number): NotifyError {
  return new NotifyError('INVALID_INPUT', `The file is not UTF-8 text (line ${line}); if it was saved as Latin-1 / Windows-1252, import it as latin1: ?encoding=latin1 over the API, or --encoding latin1`, {
    line,
  });
}

/** Reads the whole source once and throws if it is not valid text in `encoding` (nothing is imported from a file that fails half way). */
export async function assertDecodable(chunks: CsvSource, encoding: CsvEncoding = 'utf-8'): Promise<void> {
  for await (const _ of decodeChunks(chunks, encoding));
}

/**
 * A spreadsheet runs a cell that starts with one of these as a formula (CSV injection); export
 * prefixes such a cell with `'` and import removes that prefix again, so the data round-trips.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function formulaSafe(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

export function unFormulaSafe(cell: string): string {
  return cell.startsWith("'") && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/** One RFC 4180 record (without its line break): cells holding a comma, quote or line break are quoted. */
export function formatCsvRow(cells: readonly string[]): string {
  return cells.map((c) => (/[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(',');
}
