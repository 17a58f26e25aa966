import { NotifyError } from '../errors.ts';
import type { ContactsService } from './contacts.ts';
import { parseCsv } from './csv.ts';

export interface ImportResult {
  imported: number;
  /** rows that were refused, with their record number (the header is 1) and why */
  rejected: { line: number; reason: string }[];
}

const KNOWN = new Set(['email', 'name']);

/**
 * Imports contacts from CSV with a header row: `email` (required), `name`, every other column into
 * attributes (empty cells skipped). A bad row is reported and skipped; it never stops the import.
 * Imported rows keep any existing status: an import never lifts a suppression.
 */
export async function importContacts(
  contacts: ContactsService,
  source: AsyncIterable<string | Buffer>,
  opts: { lists?: string[]; onProgress?: (done: number) => void } = {},
): Promise<ImportResult> {
  const result: ImportResult = { imported: 0, rejected: [] };
  let header: string[] | undefined;
  let line = 0;
  for await (const record of parseCsv(source)) {
    line++;
    if (!header) {
      header = record.map((h) => h.trim().toLowerCase());
      if (!header.includes('email')) throw new NotifyError('INVALID_INPUT', 'The CSV header has no "email" column', { header });
      continue;
    }
    if (record.length === 1 && record[0].trim() === '') continue; // blank line
    const row = Object.fromEntries(header.map((h, i) => [h, (record[i] ?? '').trim()]));
    const attributes = Object.fromEntries(Object.entries(row).filter(([k, v]) => !KNOWN.has(k) && k !== '' && v !== ''));
    try {
      await contacts.upsert({ email: row.email, name: row.name || undefined, lists: opts.lists, attributes: Object.keys(attributes).length ? attributes : undefined });
      result.imported++;
      opts.onProgress?.(result.imported);
    } catch (err) {
      if (!(err instanceof NotifyError)) throw err;
      result.rejected.push({ line, reason: err.message });
    }
  }
  if (!header) throw new NotifyError('INVALID_INPUT', 'The CSV file is empty');
  return result;
}
