import { mkdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type Expression, Kysely, type SqlBool, sql } from 'kysely';
import type { JsonMemberConditions, JsonRowColumn, StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';
import { eventInserter } from './event-inserts.ts';
import { NotifySqliteDialect } from './dialect.ts';
import { fixedWriter, keyedReader, rowInserter, rowUpdater } from './prepared-writes.ts';
import { sendGroups } from './send-groups.ts';
import { cachingStatements } from './statement-cache.ts';
import { stepGroups } from './step-groups.ts';
import { writeTransactions } from './transactions.ts';

interface Shared {
  db: Kysely<Database>;
  /** the connection under `db`, for statements prepared once and run many times (insertRows) */
  sqlite: BetterSqlite3.Database;
  refs: number;
}

/**
 * One connection per SQLite file per process, shared by every store opened on it. better-sqlite3
 * is synchronous: with two connections in one process, one waiting out busy_timeout for the write
 * lock blocks the event loop the other needs to commit, and both fail with "database is locked".
 * Sharing one Kysely instance puts every statement and transaction of the process behind its
 * connection mutex instead; other processes still wait for the writer via busy_timeout.
 */
const open = new Map<string, Shared>();

/** WAL size (pages) past which a commit copies the WAL back into the database file */
export const WAL_CHECKPOINT_PAGES = 10_000;

function connect(path: string): Pick<Shared, 'db' | 'sqlite'> {
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // A tracking batch touches one page of notify_events_contact per person it names (thousands),
  // and each commit writes every touched page to the WAL: with the default 1,000-page threshold
  // nearly every batch commit also ran a checkpoint (each page copied back and the file synced, on
  // the request thread). 10,000 pages (~40 MB of WAL) copy a page once per several batches.
  sqlite.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  sqlite.pragma('foreign_keys = ON');
  // Several processes (worker + server) share one file: wait for the writer instead of failing.
  sqlite.pragma('busy_timeout = 10000');
  // SQLite's lower() folds ASCII only; searches must fold as the lower-cased term does.
  sqlite.function('notify_lower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v));
  return { sqlite, db: new Kysely<Database>({ dialect: new NotifySqliteDialect({ database: cachingStatements(sqlite) }, sqlite, path) }) };
}

/** `sqlite:./notify.db`, `sqlite::memory:` */
export function createSqliteDialect(url: string): StoreDialect {
  const file = url.replace(/^sqlite:/, '');
  const memory = file === ':memory:';
  const path = memory ? file : resolve(file);
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  let shared = memory ? undefined : open.get(path);
  if (shared) shared.refs++;
  else {
    shared = { ...connect(path), refs: 1 };
    if (!memory) open.set(path, shared);
  }
  const { db } = shared;
  const handle = shared;
  const insertRows = rowInserter(shared.sqlite);
  const lockRowsByKey = keyedReader(shared.sqlite);
  const updateRows = rowUpdater(shared.sqlite);
  const writeFixed = fixedWriter(shared.sqlite);
  let closed = false;
  return {
    kind: 'sqlite',
    db,
    ...queries,
    writeTransaction: writeTransactions(shared.sqlite),
    insertRows,
    lockRowsByKey,
    updateRows,
    writeFixed,
    ...sendGroups(writeFixed),
    ...stepGroups(writeFixed),
    eventInserter: eventInserter(insertRows),
    async prepare() {},
    isUniqueViolation: (err) => /^SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)$/.test(String((err as { code?: string })?.code)),
    isConnectionError: (err) => /^SQLITE_(CANTOPEN|IOERR|CORRUPT|NOTADB|BUSY|READONLY)/.test(String((err as { code?: string })?.code)),
    async destroyData() {
      await this.close();
      if (!memory && !open.has(path)) for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    },
    async close() {
      if (closed) return;
      closed = true;
      if (--handle.refs > 0) return;
      if (open.get(path) === handle) open.delete(path);
      await db.destroy();
    },
  };
}

const jsonColumns = (columns: readonly JsonRowColumn[]) => columns.map((c) => `value->>'${c.name}' as ${c.name}`).join(', ');

/** SQLite has one writer at a time and one namespace: most pieces are the plain form. */
const queries = {
  columns: { id: 'integer', pk: (c) => c.primaryKey().autoIncrement(), ref: 'integer', ts: 'integer', json: 'text', bool: 'integer' },
  migrationTableSchema: async () => undefined,
  // One writer at a time holds the whole database (a claim's single UPDATE, a writeTransaction): no lock to add.
  lockTable: async () => {},
  lockForClaim: (query) => query,
  lockForUpdate: (query) => query,
  lockForKeyShare: (query) => query,
  lockForDelete: (query) => query,
  holdRow: async (db, table, id, column, value) => {
    const res = await db
      .updateTable(table)
      .set((eb) => ({ [column]: eb.ref(column) }))
      .where('id', '=', id)
      .where(column, '=', value)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },
  // SQLite prepares a bound list faster than it unpacks JSON.
  inList: (values) => values,
  // named as the columns, so the rows also serve as the FROM of an UPDATE
  jsonRows: (json, columns) => sql`select ${sql.raw(jsonColumns(columns))} from json_each(${json})`,
  // json_each's key is the row's index in the array
  rowSource: (columns) => ({ text: `select ${jsonColumns(columns)} from json_each(?)`, order: 'key', parameters: (rows) => [JSON.stringify(rows)] }),
  idList: (ids) => sql<number>`(select value from json_each(${JSON.stringify(ids)}))`,
  // ->> reads a string member as its text, which is what a JSON text column holds
  jsonRowValue: (value) => JSON.stringify(value),
  lower: (value) => sql<string>`notify_lower(${value})`,
  position: (value, part) => sql<number>`instr(${value}, ${part})`,
  jsonMember: jsonMemberConditions(),
} satisfies Partial<StoreDialect>;

/**
 * json_type() tells the member's JSON type (text, integer, real, true, false, null, array, object;
 * NULL when absent), json_extract() its SQL value. The path quotes the key, which holds neither
 * a double quote nor a backslash (segments validate names), and is bound like the value.
 */
function jsonMemberConditions(): JsonMemberConditions {
  const path = (key: string) => `$."${key}"`;
  const type = (column: Expression<unknown>, key: string) => sql`json_type(${column}, ${path(key)})`;
  const value = (column: Expression<unknown>, key: string) => sql`json_extract(${column}, ${path(key)})`;
  const typeOf = (v: string | number) => (typeof v === 'number' ? sql`in ('integer', 'real')` : sql`= 'text'`);
  return {
    equals: (column, key, v) =>
      typeof v === 'boolean'
        ? sql<SqlBool>`(${type(column, key)} = ${v ? 'true' : 'false'})`
        : sql<SqlBool>`(${type(column, key)} ${typeOf(v)} and ${value(column, key)} = ${v})`,
    compare: (column, key, op, v) => sql<SqlBool>`(${type(column, key)} ${typeOf(v)} and ${value(column, key)} ${sql.raw(op)} ${v})`,
    contains: (column, key, v) =>
      sql<SqlBool>`(case ${type(column, key)} when 'text' then instr(${value(column, key)}, ${v}) > 0 when 'array' then exists (select 1 from json_each(${column}, ${path(key)}) e where e.type = 'text' and e.value = ${v}) else 0 end)`,
    exists: (column, key) => sql<SqlBool>`(${type(column, key)} is not null)`,
  };
}
