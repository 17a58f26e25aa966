/**
 * RFC 4180 CSV, read incrementally: quoted fields may hold commas, doubled quotes and line breaks;
 * CRLF or LF ends a record; a UTF-8 BOM is dropped. Yields each record as an array of fields.
 */
export async function* parseCsv(chunks: AsyncIterable<string | Buffer>): AsyncGenerator<string[]> {
  let field = '';
  let record: string[] = [];
  let quoted = false;
  let afterQuote = false;
  let first = true;
  for await (const chunk of chunks) {
    let text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (first) {
      text = text.replace(/^\uFEFF/, '');
      first = false;
    }
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (quoted) {
        if (ch === '"') {
          quoted = false;
          afterQuote = true;
        } else field += ch;
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
        record.push(field);
        field = '';
      } else if (ch === '\n') {
        record.push(field.endsWith('\r') ? field.slice(0, -1) : field);
        yield record;
        record = [];
        field = '';
      } else field += ch;
    }
  }
  if (field !== '' || record.length > 0) {
    record.push(field.endsWith('\r') ? field.slice(0, -1) : field);
    yield record;
  }
}
