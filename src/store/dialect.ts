import type { ColumnDataType, ColumnDefinitionBuilder, Expression, Kysely, RawBuilder, SelectQueryBuilder, SqlBool } from 'kysely';
import type { GroupWrites } from './group-writes.ts';
import type { Database } from './schema.ts';

export type DialectKind = 'sqlite' | 'postgres';

/** The column types a migration writes once for both engines. */
export interface ColumnTypes {
  /** type of a primary key id column */
  id: ColumnDataType;
  /** modifier that makes the id column an auto-incrementing primary key */
  pk: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** type of a column referencing an id */
  ref: ColumnDataType;
  /** epoch milliseconds */
  ts: ColumnDataType;
  json: ColumnDataType;
  bool: ColumnDataType;
}

/** A column of rows that travel as one JSON parameter (see StoreDialect.jsonRows). */
export interface JsonRowColumn {
  name: string;
  type: 'text' | 'integer' | 'smallint' | 'bigint' | 'json';
}

/** `columnList({ id: 'bigint', name: 'text' })`: a column list written as one line per table, in the order given. */
export const columnList = (spec: Record<string, JsonRowColumn['type']>): readonly JsonRowColumn[] =>
  Object.entries(spec).map(([name, type]) => ({ name, type }));

/** rows as the FROM of a fixed statement (StoreDialect.rowSource) */
export interface RowSource {
  text: string;
  /** a column of the source (not selected) that numbers the rows in the order given */
  order: string;
  parameters(rows: readonly Record<string, unknown>[]): unknown[];
}

/** A statement whose text never changes (`?` placeholders, no other `?`) and its parameters. */
export interface FixedRun {
  text: string;
  parameters: readonly unknown[];
}

export interface WriteTransactionOptions {
  /**
   * Every row the transaction's inserts reference was read in it, under its lock: the engine may
   * skip its foreign-key checks. SQLite turns them off around the transaction, which expires the
   * connection's prepared statements (each is prepared again on its next run): worth it for a
   * large batch of inserts only. PostgreSQL ignores it.
   */
  referencesRead?: boolean;
}

/** updateRows changes a row only while this column holds this value */
export interface RowGuard {
  column: string;
  value: string;
}

/** A scalar a JSON member is compared with. */
export type JsonScalar = string | number | boolean;

/**
 * Conditions on one member of a JSON object column (contact attributes), all with the key and
 * value bound as parameters. A member of another JSON type than the value never matches.
 */
export interface JsonMemberConditions {
  /** the member equals the value, type included (`"5"` is not 5) */
  equals(column: Expression<unknown>, key: string, value: JsonScalar): RawBuilder<SqlBool>;
  /** numbers numerically, strings by code point */
  compare(column: Expression<unknown>, key: string, op: '<' | '>', value: string | number): RawBuilder<SqlBool>;
  /** a string member holding the value (case-sensitive), or an array member with it as an element */
  contains(column: Expression<unknown>, key: string, value: string): RawBuilder<SqlBool>;
  /** the member is present (its value may be null) */
  exists(column: Expression<unknown>, key: string): RawBuilder<SqlBool>;
}

/** a lock clause fits a select of any table and shape */
type AnySelect = SelectQueryBuilder<any, any, any>;

/**
 * What differs between the engines. Everything else is shared Kysely in store/repos/, which asks
 * the dialect for these pieces and never which engine it runs on; the group commits each engine
 * writes its own way are in GroupWrites (group-writes.ts).
 * Implementations: store/sqlite/index.ts and store/postgres/index.ts.
 */
export interface StoreDialect extends GroupWrites {
  kind: DialectKind;
  db: Kysely<Database>;
  columns: ColumnTypes;
  /** prepares the connection target (PostgreSQL schema) before migrations */
  prepare(): Promise<void>;
  /** where the migrator keeps its tables (undefined: the engine has one namespace) */
  migrationTableSchema(): Promise<string | undefined>;
  isUniqueViolation(err: unknown): boolean;
  /** the database went away or refused us (as opposed to a bad query) */
  isConnectionError(err: unknown): boolean;
  /**
   * Runs `fn` in a transaction in which no other writer can change what `fn` reads before it
   * writes: SQLite takes the database's write lock up front (BEGIN IMMEDIATE); PostgreSQL locks
   * rows as `fn` reads them (lockForUpdate) or tables (lockTable).
   */
  writeTransaction<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>, opts?: WriteTransactionOptions): Promise<T>;
  /** locks a whole table until the transaction ends, against writers that are not row-locked */
  lockTable(trx: Kysely<Database>, table: string): Promise<void>;
  /** the selected rows stay locked for this transaction; rows another claim holds are skipped */
  lockForClaim<Q extends AnySelect>(query: Q): Q;
  /** the selected rows stay locked for this transaction, in the order read (others wait) */
  lockForUpdate<Q extends AnySelect>(query: Q): Q;
  /** the selected rows cannot be deleted or have their key changed until this transaction ends (as a foreign key's check holds them); others may still read and update them */
  lockForKeyShare<Q extends AnySelect>(query: Q): Q;
  /** the selected rows locked as a delete locks them: this waits for, and then blocks, the KEY SHARE holders as well */
  lockForDelete<Q extends AnySelect>(query: Q): Q;
  /**
   * Whether the row `id` of `table` has `column` = `value`, held so until the transaction ends
   * against writers that would change it, without waiting for other holders: PostgreSQL takes a
   * share lock (FOR SHARE); SQLite, which locks no rows, takes the database's write lock by a
   * no-op update of the row.
   */
  holdRow(db: Kysely<Database>, table: 'notify_campaigns', id: number, column: 'status', value: string): Promise<boolean>;
  /** the right-hand side of `column in (...)` for up to a thousand values */
  inList(values: readonly string[]): readonly string[] | RawBuilder<string>;
  /** `select <columns> from` the rows of a JSON array of objects, bound as ONE parameter */
  jsonRows(json: string, columns: readonly JsonRowColumn[]): RawBuilder<unknown>;
  /**
   * `select <columns> from` rows bound as parameters, as a fixed text with `?` placeholders (it can
   * be prepared) and the parameters for some rows: on PostgreSQL one array literal per column
   * (unnest), on SQLite the rows as one JSON parameter (jsonRows). Values as jsonRowValue gives them.
   */
  rowSource(columns: readonly JsonRowColumn[]): RowSource;
  /** the value to put into a `json` column of a jsonRows row */
  jsonRowValue(value: unknown): unknown;
  /**
   * Inserts many rows (values as jsonRowValue gives them) in the transaction `trx` holds: on
   * SQLite one prepared statement run per row, on PostgreSQL one prepared statement with one array
   * parameter per column (rowSource).
   */
  insertRows(trx: Kysely<Database>, table: string, columns: readonly JsonRowColumn[], rows: readonly Record<string, unknown>[]): Promise<void>;
  /**
   * The rows of `table` whose unique `key` column holds one of `keys` (given once each), as arrays
   * of the `columns` values in that order (bigint columns as numbers), locked for this transaction
   * as lockForUpdate locks them, in id order: on SQLite one prepared SELECT run per key on the
   * connection `trx` holds (the write lock covers them), on PostgreSQL one prepared SELECT ... FOR
   * NO KEY UPDATE per thousand keys, bound as ONE text[] parameter.
   */
  lockRowsByKey(trx: Kysely<Database>, table: string, key: string, columns: readonly string[], keys: readonly string[]): Promise<unknown[][]>;
  /**
   * Updates many rows, each by its `key` column and with its own values, only where the table's
   * `guard.column` still equals `guard.value` (compare-and-set); returns how many changed. The
   * statement's text never changes with the number of rows: on SQLite one prepared UPDATE run per
   * row in the transaction `trx` holds, on PostgreSQL one UPDATE ... FROM the rows as ONE JSON
   * parameter (jsonRows).
   */
  updateRows(trx: Kysely<Database>, table: string, key: JsonRowColumn, columns: readonly JsonRowColumn[], rows: readonly Record<string, unknown>[], guard: RowGuard): Promise<number>;
  /**
   * Runs fixed statements as one write transaction of their own (a single one alone: it is atomic)
   * and returns each one's rows (none for a statement without RETURNING). For the send loop's group
   * commits, where the query builder, Kysely's transaction and an await per statement cost more
   * CPU than the statements: on SQLite, under the connection's lock, BEGIN IMMEDIATE, each
   * statement prepared once per text and run synchronously, COMMIT; on PostgreSQL through one
   * pooled connection (a caller on a hot path writes one statement: one round trip).
   */
  writeFixed(db: Kysely<Database>, statements: readonly FixedRun[]): Promise<unknown[][]>;
  /** the right-hand side of `id in (...)`: the ids as ONE parameter, so the statement's text never changes with their number */
  idList(ids: readonly number[]): RawBuilder<number>;
  /** lower case as JavaScript's toLowerCase() makes it, non-ASCII letters included */
  lower(value: Expression<string | null>): RawBuilder<string>;
  /** `strpos`: the 1-based position of `part` in `value`, 0 when absent; no wildcards */
  position(value: Expression<string | null>, part: string): RawBuilder<number>;
  jsonMember: JsonMemberConditions;
  /** drops everything this store created (tests: the per-run PostgreSQL schema) */
  destroyData(): Promise<void>;
  close(): Promise<void>;
}
