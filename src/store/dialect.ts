import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

export type DialectKind = 'sqlite' | 'postgres';

/**
 * What differs between the engines. Everything else is shared Kysely in store/repos/.
 * Implementations: store/sqlite/index.ts and store/postgres/index.ts.
 */
export interface StoreDialect {
  kind: DialectKind;
  db: Kysely<Database>;
  /** prepares the connection target (PostgreSQL schema) before migrations */
  prepare(): Promise<void>;
  isUniqueViolation(err: unknown): boolean;
  /** the database went away or refused us (as opposed to a bad query) */
  isConnectionError(err: unknown): boolean;
  /** drops everything this store created (tests: the per-run PostgreSQL schema) */
  destroyData(): Promise<void>;
  close(): Promise<void>;
}
