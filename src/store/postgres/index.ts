import { type DatabaseIntrospector, type Expression, Kysely, PostgresDialect, type SqlBool, sql } from 'kysely';
import type { FixedRun, JsonMemberConditions, JsonRowColumn, StoreDialect } from '../dialect.ts';
import { type FixedStatement, fixedStatement } from '../fixed-statement.ts';
import { createPool } from './pool.ts';
import { columnArrayParameters, columnArraysText, ROW_ORDER, textArrayLiteral } from './column-arrays.ts';
import { eventInserter } from './event-inserts.ts';
import { writeOpens } from './tracking-opens.ts';
import { sendGroups } from './send-groups.ts';
import { stepGroups } from './step-groups.ts';
import type { Database } from '../schema.ts';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004']);

/** PostgreSQL at `url` (options in pool.ts) */
export function createPostgresDialect(url: string): StoreDialect {
  const { pool, schema } = createPool(url);
  const db = new Kysely<Database>({ dialect: new CurrentSchemaDialect({ pool }) });
  let closed = false;
  return {
    kind: 'postgres',
    db,
    ...queries,
    ...sendGroups(queries.writeFixed),
    ...stepGroups(queries.writeFixed),
    eventInserter,
    writeOpens,
    async prepare() {
      if (!schema) return;
      try {
        await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
      } catch (err) {
        // Two sessions creating the same schema at once: "if not exists" checks before either
        // commits, and the later one fails on the catalogue's unique index. The schema is there.
        const { rows } = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
        if (rows.length === 0) throw err;
      }
    },
    // Without a schema Kysely's migrator finds its tables in ANY schema: a second notify in another
    // schema of the same database would see the first one's tables, skip creating its own, and fail.
    async migrationTableSchema() {
      const { rows } = await sql<{ name: string | null }>`select current_schema() as name`.execute(db);
      return rows[0]?.name ?? 'public';
    },
    isUniqueViolation: (err) => (err as { code?: string })?.code === '23505',
    isConnectionError: (err) => {
      const e = err as { code?: string; message?: string };
      return CONNECTION_CODES.has(String(e?.code)) || /Connection terminated|timeout exceeded when trying to connect|not queryable/i.test(String(e?.message));
    },
    async destroyData() {
      if (schema) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      await this.close();
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

/** one FixedStatement per text writeFixed meets (each keeps its text in PostgreSQL's placeholder form) */
const fixedTexts = new Map<string, FixedStatement>();
function fixed(text: string): FixedStatement {
  let statement = fixedTexts.get(text);
  if (!statement) {
    statement = fixedStatement(text);
    fixedTexts.set(text, statement);
  }
  return statement;
}

/** Row locks where a claim or an update needs them; many values travel as one JSON parameter. */
const jsonRows = (json: string, columns: readonly JsonRowColumn[]) =>
  sql`select ${sql.raw(columns.map((c) => c.name).join(', '))} from jsonb_to_recordset(${json}::jsonb) as x(${sql.raw(
    columns.map((c) => `${c.name} ${c.type === 'json' ? 'jsonb' : c.type}`).join(', '),
  )})`;

const queries = {
  columns: { id: 'bigserial', pk: (c) => c.primaryKey(), ref: 'bigint', ts: 'bigint', json: 'jsonb', bool: 'smallint' },
  writeTransaction: (db, fn) => db.transaction().execute(fn),
  lockTable: async (trx, table) => {
    await sql`lock table ${sql.table(table)} in exclusive mode`.execute(trx);
  },
  // Concurrent claims take different rows instead of waiting for each other.
  lockForClaim: (query) => query.forUpdate().skipLocked() as typeof query,
  // NO KEY UPDATE still lets inserts that reference these rows take their foreign-key share lock.
  lockForUpdate: (query) => query.forNoKeyUpdate() as typeof query,
  lockForKeyShare: (query) => query.forKeyShare() as typeof query,
  lockForDelete: (query) => query.forUpdate() as typeof query,
  holdRow: async (db, table, id, column, value) => (await db.selectFrom(table).select('id').where('id', '=', id).where(column, '=', value).forShare().executeTakeFirst()) !== undefined,
  // One parameter whatever the number of values: the statement's text never changes.
  inList: (values) => sql<string>`(select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`,
  jsonRows,
  // a jsonb member of the row, so the object itself
  jsonRowValue: (value) => value,
  rowSource: (columns) => ({ text: columnArraysText(columns), order: ROW_ORDER, parameters: (rows) => columnArrayParameters(columns, rows) }),
  // prepared: the text depends on the table and columns only (column-arrays.ts)
  async insertRows(trx, table, columns, rows) {
    if (rows.length === 0) return;
    await fixed(`insert into ${table} (${columns.map((c) => c.name).join(', ')}) ${columnArraysText(columns)}`)(trx, columnArrayParameters(columns, rows));
  },
  async lockRowsByKey(trx, table, key, columns, keys) {
    const rows: unknown[][] = [];
    // The key comes back as its position among `keys` (a number, not the string again). NO KEY
    // UPDATE, as lockForUpdate; in id order, so concurrent writers wait instead of deadlocking.
    const others = columns.filter((c) => c !== key);
    const read = fixed(`select k.key_ordinal, ${others.map((c) => `t.${c}`).join(', ') || 't.id'} from unnest(?::text[]) with ordinality as k(v, key_ordinal) join ${table} t on t.${key} = k.v order by t.id for no key update of t`);
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      const r = await read<Record<string, unknown>>(trx, [textArrayLiteral(chunk)]);
      for (const row of r.rows) rows.push(columns.map((c) => (c === key ? chunk[Number(row.key_ordinal) - 1] : row[c])));
    }
    return rows;
  },
  async updateRows(trx, table, key, columns, rows, guard) {
    if (rows.length === 0) return 0;
    const set = columns.map((c) => `${c.name} = x.${c.name}`).join(', ');
    const res = await sql`update ${sql.table(table)} set ${sql.raw(set)} from (${jsonRows(JSON.stringify(rows), [key, ...columns])}) as x where ${sql.table(table)}.${sql.ref(key.name)} = x.${sql.ref(key.name)} and ${sql.table(table)}.${sql.ref(guard.column)} = ${guard.value}`.execute(trx);
    return Number(res.numAffectedRows ?? 0);
  },
  async writeFixed(db, statements) {
    const run = (conn: Kysely<Database>) => async (s: FixedRun) => (await fixed(s.text)(conn, s.parameters)).rows;
    if (statements.length === 1) return [await run(db)(statements[0])];
    return db.transaction().execute(async (trx) => {
      const out: unknown[][] = [];
      for (const s of statements) out.push(await run(trx)(s));
      return out;
    });
  },
  idList: (ids) => sql<number>`(select unnest(${ids}::bigint[]))`,
  lower: (value) => sql<string>`lower(${value})`,
  position: (value, part) => sql<number>`strpos(${value}, ${part})`,
  jsonMember: jsonMemberConditions(),
} satisfies Partial<StoreDialect>;

/**
 * jsonb_typeof() guards every read so a member of another type never matches (and a cast never
 * fails); equality is containment, which jsonb compares by value (5 = 5.0). Strings compare by
 * code point (`collate "C"`), as SQLite compares them.
 */
function jsonMemberConditions(): JsonMemberConditions {
  const member = (column: Expression<unknown>, key: string) => sql`(${column} -> ${key}::text)`;
  const text = (column: Expression<unknown>, key: string) => sql`(${column} ->> ${key}::text)`;
  return {
    equals: (column, _key, v) => sql<SqlBool>`(${column} @> ${JSON.stringify({ [_key]: v })}::jsonb)`,
    compare: (column, key, op, v) =>
      typeof v === 'number'
        ? sql<SqlBool>`(case when jsonb_typeof(${member(column, key)}) = 'number' then ${text(column, key)}::numeric end ${sql.raw(op)} ${v}::numeric)`
        : sql<SqlBool>`(case when jsonb_typeof(${member(column, key)}) = 'string' then ${text(column, key)} end collate "C" ${sql.raw(op)} ${v}::text)`,
    contains: (column, key, v) =>
      sql<SqlBool>`(case jsonb_typeof(${member(column, key)}) when 'string' then strpos(${text(column, key)}, ${v}::text) > 0 when 'array' then ${member(column, key)} @> jsonb_build_array(${v}::text) else false end)`,
    exists: (column, key) => sql<SqlBool>`(${member(column, key)} is not null)`,
  };
}

/**
 * Kysely's PostgreSQL introspector reads the columns of EVERY schema (pg_attribute, serial
 * sequences), and the migrator calls it to ask whether its own two tables exist. While another
 * schema of the same database is being created or dropped (parallel test runs, another app) that
 * catalogue-wide query fails ("column ... does not exist"). Ours looks at the current schema only.
 */
class CurrentSchemaDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return {
      async getSchemas() {
        const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(db);
        return rows.map((r) => ({ name: r.name }));
      },
      async getTables() {
        const { rows } = await sql<{ schema: string; name: string; type: string }>`
          select table_schema as schema, table_name as name, table_type as type
          from information_schema.tables where table_schema = current_schema()`.execute(db);
        return rows.map((r) => ({ name: r.name, schema: r.schema, isView: r.type === 'VIEW', columns: [] }));
      },
      async getMetadata(options) {
        return { tables: await this.getTables(options) };
      },
    };
  }
}
