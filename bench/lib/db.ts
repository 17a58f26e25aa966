import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createStore } from '../../src/store/index.ts';

export type Engine = 'sqlite' | 'postgres';

/** PostgreSQL for benchmarks: NOTIFY_BENCH_PG_URL, else NOTIFY_TEST_PG_URL, else the local test server. */
export const PG_URL = process.env.NOTIFY_BENCH_PG_URL ?? process.env.NOTIFY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let pgAnswers: Promise<boolean> | undefined;
/** Whether the benchmark PostgreSQL answers (PostgreSQL figures are skipped, not failed, when it does not). */
export function postgresAvailable(): Promise<boolean> {
  pgAnswers ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return pgAnswers;
}

export interface BenchDatabase {
  engine: Engine;
  url: string;
  /** drops the schema / deletes the SQLite folder */
  drop(): Promise<void>;
}

let counter = 0;

/** A database of its own: a SQLite file in a temp folder, or a fresh `bench_*` schema on PostgreSQL. */
export function benchDatabase(engine: Engine): BenchDatabase {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'notify-bench-'));
    return { engine, url: `sqlite:${join(dir, 'notify.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `bench_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  return {
    engine,
    url,
    async drop() {
      const store = createStore(url);
      await store.dialect.destroyData();
    },
  };
}
