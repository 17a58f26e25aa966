import pg from 'pg';
import { prepareFixedStatements } from './prepared.ts';

// ids and epoch-ms timestamps are bigint; they stay well inside Number's safe range.
const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (v: string) => (v === null ? null : Number(v));
    return (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * `postgres://user@host:port/db`, optionally `?schema=name` to keep notify's tables in their own
 * schema (created when missing). `?max=N` sets the pool size (default 10). `?options=-c name=value`
 * sets server settings for notify's sessions, as libpq's `options` does (with `schema` too).
 */
export function createPool(url: string): { pool: pg.Pool; schema: string | null } {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  const max = Number(parsed.searchParams.get('max') ?? 10);
  const options = [parsed.searchParams.get('options'), schema ? `-c search_path=${schema}` : undefined].filter(Boolean).join(' ');
  parsed.searchParams.delete('schema');
  parsed.searchParams.delete('max');
  parsed.searchParams.delete('options');
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name '${schema}'`);
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max,
    types,
    connectionTimeoutMillis: 10_000,
    ...(options ? { options } : {}),
  });
  // A client that loses its server must not crash the process: pg emits 'error' on the client
  // (idle in the pool, or checked out mid-query or mid-transaction, where the pool has no listener);
  // the query in flight or the next one rejects with the error instead.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    prepareFixedStatements(client);
  });
  return { pool, schema };
}
