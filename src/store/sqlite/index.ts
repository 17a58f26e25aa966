import { mkdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { StoreDialect } from '../dialect.ts';
import type { Database } from '../schema.ts';

/** `sqlite:./notify.db`, `sqlite::memory:` */
export function createSqliteDialect(url: string): StoreDialect {
  const file = url.replace(/^sqlite:/, '');
  const memory = file === ':memory:';
  const path = memory ? file : resolve(file);
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // Several processes (worker + server) share one file: wait for the writer instead of failing.
  sqlite.pragma('busy_timeout = 10000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  let closed = false;
  return {
    kind: 'sqlite',
    db,
    async prepare() {},
    isUniqueViolation: (err) => /^SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)$/.test(String((err as { code?: string })?.code)),
    isConnectionError: (err) => /^SQLITE_(CANTOPEN|IOERR|CORRUPT|NOTADB|BUSY|READONLY)/.test(String((err as { code?: string })?.code)),
    async destroyData() {
      await this.close();
      if (!memory) for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
