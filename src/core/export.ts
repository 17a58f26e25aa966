import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { formatCsvRow, formulaSafe } from './csv.ts';
import { CONTACT_STATUSES, type ContactStatus } from './types.ts';

export interface ExportOptions {
  /** only members of this list */
  list?: string;
  /** only contacts with this status */
  status?: string;
  /** contacts read per query (keyset pages) */
  pageSize?: number;
}

const FIXED = ['email', 'name', 'status', 'lists', 'created_at'];

/**
 * Contacts as CSV lines (each ends with CRLF): `email,name,status,lists,created_at,<attribute keys>`.
 * Streamed in keyset pages, twice: the first pass only collects the attribute keys for the header,
 * so memory holds one page and the key names, never the whole audience. `lists` is itself a CSV
 * record of list names, the way Mailchimp writes TAGS, so contacts:import reads it back.
 * Cells a spreadsheet would run as a formula are prefixed with `'` (contacts:import removes it).
 */
export async function* exportContactsCsv(ctx: Pick<Context, 'store'>, opts: ExportOptions = {}): AsyncGenerator<string> {
  const filter = await resolveFilter(ctx, opts);
  const pageSize = opts.pageSize ?? 1000;
  const keys = new Set<string>();
  for await (const row of pages(ctx, filter, pageSize)) for (const k of Object.keys(row.attributes)) keys.add(k);
  const attributeKeys = [...keys].filter((k) => !FIXED.includes(k)).sort();
  yield `${formatCsvRow([...FIXED, ...attributeKeys])}\r\n`;
  for await (const row of pages(ctx, filter, pageSize)) {
    const cells = [row.email, row.name ?? '', row.status, formatCsvRow(row.lists), row.created_at.toISOString(), ...attributeKeys.map((k) => cellOf(row.attributes[k]))];
    yield `${formatCsvRow(cells.map(formulaSafe))}\r\n`;
  }
}

async function* pages(ctx: Pick<Context, 'store'>, filter: { list?: number; status?: ContactStatus }, pageSize: number) {
  let after: number | undefined = 0;
  while (after !== undefined) {
    const page = await ctx.store.contacts.exportPage(after, pageSize, filter);
    yield* page.rows;
    after = page.next;
  }
}

async function resolveFilter(ctx: Pick<Context, 'store'>, opts: ExportOptions): Promise<{ list?: number; status?: ContactStatus }> {
  if (opts.status !== undefined && !(CONTACT_STATUSES as readonly string[]).includes(opts.status)) {
    throw new NotifyError('INVALID_INPUT', `Status must be one of ${CONTACT_STATUSES.join(', ')}`, { field: 'status' });
  }
  const status = opts.status as ContactStatus | undefined;
  if (opts.list === undefined) return { status };
  const list = await ctx.store.contacts.listId(opts.list);
  if (list === undefined) throw new NotifyError('NOT_FOUND', `No list named "${opts.list}"`, { list: opts.list });
  return { list, status };
}

/** Attribute values: strings as they are; numbers, booleans and objects as JSON (they come back as that text). */
function cellOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
