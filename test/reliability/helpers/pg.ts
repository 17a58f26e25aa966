import { freshDatabaseUrl } from '../../helpers/engines.ts';
import { createStore } from '../../../src/store/index.ts';

/** The reliability suite needs a real PostgreSQL: NOTIFY_TEST_PG_URL, as for `npm test`. */
export const PG_URL = process.env.NOTIFY_TEST_PG_URL;
export const NO_PG = PG_URL ? false : 'set NOTIFY_TEST_PG_URL to run the PostgreSQL reliability tests';

/** A fresh schema on the test PostgreSQL, and how to drop it. */
export function freshPgSchema(): { url: string; drop: () => Promise<void> } {
  const { url } = freshDatabaseUrl('postgres');
  return { url, drop: () => createStore(url).dialect.destroyData() };
}

/** The same database reached through another host:port (a TCP proxy in front of PostgreSQL). */
export function viaPort(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}
