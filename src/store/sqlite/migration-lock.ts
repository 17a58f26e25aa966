import type BetterSqlite3 from 'better-sqlite3';
import { type Kysely, SqliteAdapter, sql } from 'kysely';
import { NotifyError } from '../../errors.ts';

/**
 * Kysely's SQLite adapter takes no migration lock (it counts on one connection per database) and
 * runs the migrations without a transaction, so processes starting together on one file all read
 * "nothing applied" and all apply every migration: all but the first fail on the second
 * `add column`. Here the migrator's connection takes the database's write lock (BEGIN IMMEDIATE)
 * before it reads notify_migrations, and keeps it until every pending migration is applied and
 * recorded; the other processes wait, then find nothing left to do.
 *
 * A migration that fails leaves what it did before the failure, as it did without the lock: the
 * release cannot tell success from failure, and the migrator records each success as it goes.
 */
export class LockingSqliteAdapter extends SqliteAdapter {
  readonly #sqlite: BetterSqlite3.Database;
  readonly #file: string;

  constructor(sqlite: BetterSqlite3.Database, file: string) {
    super();
    this.#sqlite = sqlite;
    this.#file = file;
  }

  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    try {
      await sql`begin immediate`.execute(db);
    } catch (err) {
      if (!/^SQLITE_BUSY/.test(String((err as { code?: string })?.code))) throw err;
      const waited = this.#sqlite.pragma('busy_timeout', { simple: true });
      const message = `Another process held the write lock of ${this.#file} for more than ${waited} ms; migrations did not start (start this process again once the other one is done)`;
      throw new NotifyError('STORE_UNAVAILABLE', message, { file: this.#file, waitedMs: waited }, { cause: err });
    }
  }

  override async releaseMigrationLock(db: Kysely<any>): Promise<void> {
    if (this.#sqlite.inTransaction) await sql`commit`.execute(db);
  }
}
