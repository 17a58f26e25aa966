import { isNotifyError, NotifyError } from '../errors.ts';
import type { ContactsService } from './contacts.ts';
import { type CsvEncoding, type CsvSource, parseCsvLine, parseCsvRecords, unFormulaSafe } from './csv.ts';
import { type ColumnPlan, parseStatus, planColumns } from './import-columns.ts';
import { type Contact, type ContactInput, type ContactStatus, isSuppressedStatus } from './types.ts';

export interface ImportResult {
  /** new contacts */
  created: number;
  /** existing contacts this file changed (a name, an attribute, a list, a stronger status) */
  updated: number;
  /** existing contacts the file held nothing new for */
  unchanged: number;
  /** rows that were refused, with the file line they start on (the header is line 1) and why */
  rejected: { line: number; reason: string }[];
  /** rows accepted: created + updated + unchanged */
  imported: number;
}

export interface ImportOptions {
  /** lists every row joins, besides the file's own TAGS / lists column */
  lists?: string[];
  /** status for rows without a status cell (else detected from Mailchimp's UNSUB_TIME / CLEAN_TIME columns) */
  status?: ContactStatus;
  encoding?: CsvEncoding;
  /** called after every row with the counts so far */
  onProgress?: (progress: Omit<ImportResult, 'rejected'> & { rejected: number; rows: number }) => void;
}

type Outcome = 'created' | 'updated' | 'unchanged';

/**
 * Imports contacts from CSV with a header row: an email column (required; `email`, `Email Address`,
 * `E-mail`), the name (`name`, or `First Name` + `Last Name`), lists (`TAGS`, `lists`), a `status`,
 * every other column into attributes under a clean key. A bad row is reported and skipped; it never
 * stops the import. An import never lifts a suppression and never overwrites a stored value with an
 * empty cell, so running it twice changes nothing the second time.
 */
export async function importContacts(contacts: ContactsService, source: CsvSource, opts: ImportOptions = {}): Promise<ImportResult> {
  const result: ImportResult = { created: 0, updated: 0, unchanged: 0, rejected: [], imported: 0 };
  let plan: ColumnPlan | undefined;
  let rows = 0;
  for await (const record of parseCsvRecords(source, opts.encoding)) {
    if (!plan) {
      plan = planColumns(record.fields, opts.status);
      continue;
    }
    if (record.unterminated) {
      result.rejected.push({ line: record.line, reason: 'A quoted field never closes; the rest of the file was not read' });
      break;
    }
    if (record.fields.length === 1 && record.fields[0].trim() === '') continue; // blank line
    rows++;
    try {
      const outcome = await importRow(contacts, plan, record.fields, opts.lists);
      result[outcome]++;
      result.imported++;
    } catch (err) {
      if (!isNotifyError(err)) throw err;
      result.rejected.push({ line: record.line, reason: err.message });
    }
    opts.onProgress?.({ ...result, rejected: result.rejected.length, rows });
  }
  if (!plan) throw new NotifyError('INVALID_INPUT', 'The CSV file is empty (no header row)');
  return result;
}

async function importRow(contacts: ContactsService, plan: ColumnPlan, fields: string[], extraLists: string[] = []): Promise<Outcome> {
  if (fields.slice(plan.width).some((f) => f.trim() !== '')) {
    throw new NotifyError('INVALID_INPUT', `The row has ${fields.length} fields, the header ${plan.width}`);
  }
  const cell = (i: number | undefined) => (i === undefined ? '' : unFormulaSafe((fields[i] ?? '').trim()));
  const name = cell(plan.name) || [cell(plan.first), cell(plan.last)].filter(Boolean).join(' ');
  const attributes: Record<string, string> = {};
  for (const { index, key } of plan.attributes) {
    const value = cell(index);
    if (value !== '' && attributes[key] === undefined) attributes[key] = value;
  }
  const lists = [...new Set([...(await tags(cell(plan.lists))), ...extraLists])];
  const fileStatus = parseStatus(cell(plan.status)) ?? plan.fileStatus;
  const input: ContactInput = { email: cell(plan.email), ...(name ? { name } : {}), ...(lists.length ? { lists } : {}), ...(Object.keys(attributes).length ? { attributes } : {}) };

  const existing = await contacts.get(input.email);
  const status = statusToWrite(existing, fileStatus);
  if (existing && status === undefined && !changes(existing, input)) return 'unchanged';
  // A subscribed / pending file status is only an initial status: it never replaces a stored one.
  const initialStatus = fileStatus === 'subscribed' || fileStatus === 'pending' ? fileStatus : undefined;
  await contacts.upsert({ ...input, ...(status && !initialStatus ? { status } : {}) }, initialStatus ? { initialStatus } : {});
  return existing ? 'updated' : 'created';
}

/**
 * The status the file may set. A new contact takes the file's. An existing one only moves to a
 * suppressed status from a non-suppressed one (an unsubscribed file row), never the other way: an
 * import never lifts a suppression, and a bounce stays a bounce even if the file says unsubscribed.
 */
function statusToWrite(existing: Contact | undefined, fileStatus: ContactStatus | undefined): ContactStatus | undefined {
  if (!fileStatus) return undefined;
  if (!existing) return fileStatus;
  if (isSuppressedStatus(fileStatus) && !isSuppressedStatus(existing.status)) return fileStatus;
  // a contact notify.send() created is nobody's subscriber yet: the file's subscription applies
  if (existing.status === 'transactional' && (fileStatus === 'subscribed' || fileStatus === 'pending')) return fileStatus;
  return undefined;
}

function changes(existing: Contact, input: ContactInput): boolean {
  if (input.name && input.name !== existing.name) return true;
  if (Object.entries(input.attributes ?? {}).some(([k, v]) => existing.attributes[k] !== v)) return true;
  return (input.lists ?? []).some((l) => !existing.lists.includes(l));
}

/** Mailchimp writes TAGS as a CSV record inside the cell (`"VIP","Blog"`); plain `a, b` reads the same. */
async function tags(cell: string): Promise<string[]> {
  if (cell === '') return [];
  return (await parseCsvLine(cell)).map((t) => t.trim()).filter(Boolean);
}
