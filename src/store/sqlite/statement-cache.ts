import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/**
 * The connection as Kysely's SQLite driver sees it, with each statement prepared once per text
 * and reused: Kysely prepares every query it runs, and for the short statements of the send loop
 * (claims, outcome and counter writes, tens per second per chunk) preparing costs as much as
 * running. Only fixed-shape text benefits; the rest passes through a bounded cache (oldest out).
 * A statement still iterating (a stream left open) is not shared: that call gets its own.
 */
export function cachingStatements(sqlite: BetterSqlite3.Database, size = 200): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      const hit = cache.get(text);
      if (hit && !hit.busy) {
        // most recently used last, so the oldest is the first key
        cache.delete(text);
        cache.set(text, hit);
        return hit;
      }
      const statement = sqlite.prepare(text);
      if (hit) return statement;
      cache.set(text, statement);
      if (cache.size > size) cache.delete(cache.keys().next().value!);
      return statement;
    },
  } as SqliteDatabase;
}
