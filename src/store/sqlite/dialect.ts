import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type DialectAdapter, type Driver, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely';
import { LockingSqliteAdapter } from './migration-lock.ts';

/**
 * Kysely's SQLite driver begins its transactions DEFERRED: the first read takes a snapshot, and
 * the first write must then turn it into the write lock. While another process holds that lock (a
 * process starting beside this one migrates; a worker claims), SQLite refuses the upgrade at once,
 * without waiting out busy_timeout (once the other commits, the snapshot is stale and could not
 * write anyway), so a capture post that looked its address up before writing it failed with
 * "database is locked". BEGIN IMMEDIATE takes the write lock first, where busy_timeout does wait;
 * with one connection per process, the process's transactions are one after another behind its
 * mutex anyway, so taking the lock earlier costs this process no concurrency.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/** Kysely's SQLite dialect with write-first transactions and a migrator that holds the database's write lock. */
export class NotifySqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #sqlite: BetterSqlite3.Database;
  readonly #file: string;

  /** `sqlite` is the connection under `config.database` (which may wrap it) */
  constructor(config: SqliteDialectConfig, sqlite: BetterSqlite3.Database, file: string) {
    super(config);
    this.#config = config;
    this.#sqlite = sqlite;
    this.#file = file;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }

  override createAdapter(): DialectAdapter {
    return new LockingSqliteAdapter(this.#sqlite, this.#file);
  }
}
