import { mkdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type Expression, Kysely, type SqlBool, sql } from 'kysely';
import type { FixedRun, JsonMemberConditions, StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';
import { MigrationLockingSqliteDialect } from './migration-lock.ts';
import { cachingStatements } from './statement-cache.ts';

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

function connect(path: string): Pick<Shared, 'db' | 'sqlite'> {
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // Several processes (worker + server) share one file: wait for the writer instead of failing.
  sqlite.pragma('busy_timeout = 10000');
  // SQLite's lower() folds ASCII only; searches must fold as the lower-cased term does.
  sqlite.function('notify_lower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v));
  return { sqlite, db: new Kysely<Database>({ dialect: new MigrationLockingSqliteDialect({ database: cachingStatements(sqlite) }, sqlite, path) }) };
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
    writeTransaction: transactions(shared.sqlite),
    insertRows,
    lockRowsByKey,
    updateRows,
    writeFixed,
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

/**
 * BEGIN IMMEDIATE takes the write lock first, so another process cannot slip in between our read
 * and write. With `referencesRead` the foreign-key checks are off for the transaction (the pragma
 * is a no-op inside one, so it is set around it, while this connection is held): a tracking
 * batch's rows reference sends it has just read under the lock, and the checks cost ~1 µs of a
 * ~5 µs event row (three parent lookups), measured on a loaded machine.
 */
function transactions(sqlite: BetterSqlite3.Database): StoreDialect['writeTransaction'] {
  return (db, fn, opts) =>
    db.connection().execute(async (conn) => {
      const unchecked = opts?.referencesRead === true && !sqlite.inTransaction;
      if (unchecked) sqlite.pragma('foreign_keys = OFF');
      try {
        await sql`begin immediate`.execute(conn);
        try {
          const result = await fn(conn);
          await sql`commit`.execute(conn);
          return result;
        } catch (err) {
          await sql`rollback`.execute(conn).catch(() => {});
          throw err;
        }
      } finally {
        if (unchecked) sqlite.pragma('foreign_keys = ON');
      }
    });
}

/** rows per multi-row INSERT of rowInserter */
const ROWS_PER_STATEMENT = 64;

/**
 * Many rows into one table: a multi-row INSERT of ROWS_PER_STATEMENT rows with positional
 * parameters, prepared once per table and column list and run per full group, then a one-row
 * INSERT for the rest (both texts fixed, so nothing is prepared per batch). Cheaper per row than
 * the JSON form (the INSERT ... SELECT from json_each re-reads the row's JSON text once per
 * column), than a one-row statement run per row (a statement execution and a crossing into C per
 * row), and than named parameters (a property read per parameter in the binding). It runs on the
 * connection under Kysely, which is the one the caller's transaction holds: better-sqlite3 is
 * synchronous, so nothing else runs in between.
 */
function rowInserter(sqlite: BetterSqlite3.Database): StoreDialect['insertRows'] {
  const statements = new Map<string, { many: BetterSqlite3.Statement; one: BetterSqlite3.Statement }>();
  return async (_trx, table, columns, rows) => {
    const names = columns.map((c) => c.name);
    const key = `${table}(${names.join(',')})`;
    let prepared = statements.get(key);
    if (!prepared) {
      const head = `insert into "${table}" (${names.map((n) => `"${n}"`).join(', ')}) values `;
      const tuple = `(${names.map(() => '?').join(', ')})`;
      prepared = { many: sqlite.prepare(head + Array(ROWS_PER_STATEMENT).fill(tuple).join(', ')), one: sqlite.prepare(head + tuple) };
      statements.set(key, prepared);
    }
    const width = names.length;
    const group: unknown[] = new Array(ROWS_PER_STATEMENT * width);
    const single: unknown[] = new Array(width);
    let i = 0;
    for (; i + ROWS_PER_STATEMENT <= rows.length; i += ROWS_PER_STATEMENT) {
      for (let r = 0; r < ROWS_PER_STATEMENT; r++) fill(group, r * width, rows[i + r], names);
      prepared.many.run(group);
    }
    for (; i < rows.length; i++) {
      fill(single, 0, rows[i], names);
      prepared.one.run(single);
    }
  };
}

/** a column the row lacks (or holds undefined) is NULL, as the JSON form makes it */
function fill(into: unknown[], at: number, row: Record<string, unknown>, names: readonly string[]): void {
  for (let c = 0; c < names.length; c++) into[at + c] = row[names[c]] ?? null;
}

/**
 * Rows by a unique key, one prepared SELECT run per key, rows as arrays (better-sqlite3's raw mode):
 * under a write transaction nothing else can change them, and a lookup through the key's index
 * costs less than binding, compiling and sorting an IN list of a thousand values through the
 * query builder (a tracking batch's tokens: 8-10 -> ~3 us of CPU per token, loaded machine).
 */
function keyedReader(sqlite: BetterSqlite3.Database): StoreDialect['lockRowsByKey'] {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return async (_trx, table, key, columns, keys) => {
    const text = `select ${columns.map((c) => `"${c}"`).join(', ')} from "${table}" where "${key}" = ?`;
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text).raw(true);
      statements.set(text, statement);
    }
    const rows: unknown[][] = [];
    for (const k of keys) {
      const row = statement.get(k) as unknown[] | undefined;
      if (row) rows.push(row);
    }
    return rows;
  };
}

/**
 * Many rows updated by key: one UPDATE prepared once per table, key, columns and guard, run per
 * row with named parameters, on the connection the caller's transaction holds (as rowInserter).
 */
function rowUpdater(sqlite: BetterSqlite3.Database): StoreDialect['updateRows'] {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return async (_trx, table, key, columns, rows, guard) => {
    const names = columns.map((c) => c.name);
    const cacheKey = `${table}(${key.name}:${names.join(',')}|${guard.column})`;
    let statement = statements.get(cacheKey);
    if (!statement) {
      const set = names.map((n) => `"${n}" = @${n}`).join(', ');
      statement = sqlite.prepare(`update "${table}" set ${set} where "${key.name}" = @${key.name} and "${guard.column}" = @guard__`);
      statements.set(cacheKey, statement);
    }
    const params: Record<string, unknown> = { guard__: guard.value };
    const runAll = () => {
      let changed = 0;
      for (const row of rows) {
        params[key.name] = row[key.name];
        for (const name of names) params[name] = row[name] ?? null;
        changed += statement.run(params).changes;
      }
      return changed;
    };
    // outside a transaction the rows still change together, as one statement would change them
    return sqlite.inTransaction ? runAll() : sqlite.transaction(runAll)();
  };
}

/**
 * Fixed statements in one transaction, run synchronously: Kysely's connection lock keeps every
 * other query of the process (and any transaction of its) out meanwhile, and BEGIN IMMEDIATE takes
 * the write lock first, as writeTransaction does. Measured on the send loop's group commit (a
 * loaded machine): 51 -> 24 us of CPU per message against the same statements through a Kysely
 * transaction.
 */
function fixedWriter(sqlite: BetterSqlite3.Database): StoreDialect['writeFixed'] {
  const statements = new Map<string, BetterSqlite3.Statement>();
  const prepared = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  const runAll = sqlite.transaction((list: readonly FixedRun[]) =>
    list.map((s) => {
      const statement = prepared(s.text);
      if (statement.reader) return statement.all(...s.parameters);
      statement.run(...s.parameters);
      return [];
    }),
  );
  return (db, list) => db.connection().execute(async () => runAll.immediate(list));
}

/** SQLite has one writer at a time and one namespace: most pieces are the plain form. */
const queries = {
  columns: { id: 'integer', pk: (c) => c.primaryKey().autoIncrement(), ref: 'integer', ts: 'integer', json: 'text', bool: 'integer' },
  migrationTableSchema: async () => undefined,
  // One writer at a time holds the whole database (a claim's single UPDATE, a writeTransaction): no lock to add.
  lockTable: async () => {},
  lockForClaim: (query) => query,
  lockForUpdate: (query) => query,
  // SQLite prepares a bound list faster than it unpacks JSON.
  inList: (values) => values,
  // named as the columns, so the rows also serve as the FROM of an UPDATE
  jsonRows: (json, columns) => sql`select ${sql.raw(columns.map((c) => `value->>'${c.name}' as ${c.name}`).join(', '))} from json_each(${json})`,
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
