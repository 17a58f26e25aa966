import Database from 'better-sqlite3';
import pg from 'pg';

/** PostgreSQL URL of the fresh-schema form (`...?schema=name`): the server URL and the schema. */
function pgParts(url: string): { connectionString: string; schema: string | null } {
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  return { connectionString: u.toString(), schema };
}

/**
 * Rows of one SELECT, read as an operator would with the database's own client, beside the running
 * processes: SQLite opened read-only, PostgreSQL in the run's schema. `?` placeholders on both.
 */
export async function queryRows<T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(text).all(...params) as T[];
    } finally {
      db.close();
    }
  }
  const { connectionString, schema } = pgParts(url);
  const client = new pg.Client({ connectionString, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
  await client.connect();
  try {
    let n = 0;
    const res = await client.query(text.replace(/\?/g, () => `$${++n}`), params);
    return res.rows as T[];
  } finally {
    await client.end();
  }
}

/** A contact's status by address (undefined when there is no such contact). */
export async function contactStatus(url: string, email: string): Promise<string | undefined> {
  const rows = await queryRows<{ status: string }>(url, 'select status from notify_contacts where email = ?', [email]);
  return rows[0]?.status;
}

/** Removes what freshDatabaseUrl made: the PostgreSQL schema, and the SQLite folder through `cleanup`. */
export async function dropDatabase(url: string, cleanup: () => void): Promise<void> {
  const { connectionString, schema } = pgParts(url);
  if (url.startsWith('postgres') && schema) {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      await client.query(`drop schema if exists "${schema}" cascade`);
    } finally {
      await client.end();
    }
  }
  cleanup();
}
