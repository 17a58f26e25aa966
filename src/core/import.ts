import { isNotifyError, NotifyError } from '../errors.ts';
import { checkContactInput } from './contact-input.ts';
import type { ContactsService } from './contacts.ts';
import { emailKey } from './email.ts';
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

/** A row read and checked, waiting for its batch. */
interface Pending {
  line: number;
  key: string;
  input: ContactInput;
  fileStatus: ContactStatus | undefined;
}

/** Rows written per transaction: one commit (one fsync on SQLite) for this many rows instead of one each. */
export const IMPORT_BATCH = 500;

/**
 * Imports contacts from CSV with a header row: an email column (required; `email`, `Email Address`,
 * `E-mail`), the name (`name`, or `First Name` + `Last Name`), lists (`TAGS`, `lists`), a `status`,
 * every other column into attributes under a clean key. A bad row is reported and skipped; it never
 * stops the import. An import never lifts a suppression and never overwrites a stored value with an
 * empty cell, so running it twice changes nothing the second time. Rows are read IMPORT_BATCH at a
 * time: one query finds the existing contacts, one transaction writes the batch.
 */
export async function importContacts(contacts: ContactsService, source: CsvSource, opts: ImportOptions = {}): Promise<ImportResult> {
  const result: ImportResult = { created: 0, updated: 0, unchanged: 0, rejected: [], imported: 0 };
  let plan: ColumnPlan | undefined;
  let rows = 0;
  let batch: Pending[] = [];
  const keys = new Set<string>();
  const count = (outcome: Outcome | { line: number; reason: string }) => {
    if (typeof outcome === 'object') result.rejected.push(outcome);
    else {
      result[outcome]++;
      result.imported++;
    }
    rows++;
  };
  // Progress is reported once a batch is committed, so what it says is stored is stored (a listener
  // that throws to stop the import stops it between batches).
  const progress = () => opts.onProgress?.({ ...result, rejected: result.rejected.length, rows });
  const flush = async () => {
    if (batch.length === 0) return;
    await writeBatch(contacts, batch, count);
    progress();
    batch = [];
    keys.clear();
  };
  for await (const record of parseCsvRecords(source, opts.encoding)) {
    if (!plan) {
      plan = planColumns(record.fields, opts.status);
      continue;
    }
    if (record.unterminated) {
      await flush();
      result.rejected.push({ line: record.line, reason: 'A quoted field never closes; the rest of the file was not read' });
      break;
    }
    if (record.fields.length === 1 && record.fields[0].trim() === '') continue; // blank line
    let row: Pending;
    try {
      row = await readRow(plan, record.line, record.fields, opts.lists);
    } catch (err) {
      if (!isNotifyError(err)) throw err;
      count({ line: record.line, reason: err.message });
      progress();
      continue;
    }
    // a second row for one address sees what the first one wrote
    if (keys.has(row.key)) await flush();
    batch.push(row);
    keys.add(row.key);
    if (batch.length >= IMPORT_BATCH) await flush();
  }
  await flush();
  if (!plan) throw new NotifyError('INVALID_INPUT', 'The CSV file is empty (no header row)');
  return result;
}

async function readRow(plan: ColumnPlan, line: number, fields: string[], extraLists: string[] = []): Promise<Pending> {
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
  input.email = checkContactInput(input);
  return { line, key: emailKey(input.email), input, fileStatus };
}

type Write = { row: Pending; outcome: Outcome; item: Parameters<ContactsService['upsertMany']>[0][number] };

/** One lookup for the batch's existing contacts, one transaction for its writes. */
async function writeBatch(contacts: ContactsService, batch: Pending[], count: (outcome: Outcome | { line: number; reason: string }) => void): Promise<void> {
  if (batch.length === 0) return;
  const existing = await contacts.getMany(batch.map((r) => r.input.email));
  const left = await contacts.leftLists([...existing.values()].map((c) => c.id));
  const writes: Write[] = [];
  const unchanged: Pending[] = [];
  for (const row of batch) {
    const found = existing.get(row.key);
    const status = statusToWrite(found, row.fileStatus);
    if (found && status === undefined && !changes(found, row.input, left.get(found.id) ?? [])) {
      unchanged.push(row);
      continue;
    }
    // A subscribed / pending file status is only an initial status: it never replaces a stored one.
    const initialStatus = row.fileStatus === 'subscribed' || row.fileStatus === 'pending' ? row.fileStatus : undefined;
    const item = { input: { ...row.input, ...(status && !initialStatus ? { status } : {}) }, options: initialStatus ? { initialStatus } : {} };
    writes.push({ row, outcome: found ? 'updated' : 'created', item });
  }
  const failed = new Map<Pending, string>();
  try {
    await contacts.upsertMany(writes.map((w) => w.item));
  } catch (err) {
    if (!isNotifyError(err)) throw err;
    // the batch wrote nothing: row by row, so only the row at fault is rejected
    for (const w of writes) {
      try {
        await contacts.upsert(w.item.input, w.item.options);
      } catch (rowErr) {
        if (!isNotifyError(rowErr)) throw rowErr;
        failed.set(w.row, rowErr.message);
      }
    }
  }
  const outcomes = new Map<Pending, Outcome>([...unchanged.map((r) => [r, 'unchanged'] as const), ...writes.map((w) => [w.row, w.outcome] as const)]);
  for (const row of batch) {
    const reason = failed.get(row);
    count(reason === undefined ? outcomes.get(row)! : { line: row.line, reason });
  }
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

/** Whether the row changes the stored contact: a list counts only if the upsert would join it. */
function changes(existing: Contact, input: ContactInput, left: string[]): boolean {
  if (input.name && input.name !== existing.name) return true;
  if (Object.entries(input.attributes ?? {}).some(([k, v]) => existing.attributes[k] !== v)) return true;
  // list names match in any case; a list the person left stays left, so naming it changes nothing
  const known = new Set([...existing.lists, ...left].map((l) => l.toLowerCase()));
  return (input.lists ?? []).some((l) => !known.has(l.toLowerCase()));
}

/** Mailchimp writes TAGS as a CSV record inside the cell (`"VIP","Blog"`); plain `a, b` reads the same. */
async function tags(cell: string): Promise<string[]> {
  if (cell === '') return [];
  return (await parseCsvLine(cell)).map((t) => t.trim()).filter(Boolean);
}
