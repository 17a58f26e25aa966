import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { type CreateNotifyOptions, createNotify, type Notify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/contract.ts';
import { type SmtpSink, startSmtpSink } from './smtp-sink.ts';

export type Engine = 'sqlite' | 'postgres';

/** PostgreSQL runs only when NOTIFY_TEST_PG_URL is set; then an unreachable server fails the suite. */
export const ENGINES: Engine[] = process.env.NOTIFY_TEST_PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

let counter = 0;

/** A database URL of its own: a temp SQLite file, or a fresh schema in the test PostgreSQL. */
export function freshDatabaseUrl(engine: Engine): { url: string; cleanup: () => void } {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'notify-test-'));
    return { url: `sqlite:${join(dir, 'notify.db')}`, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  }
  const base = process.env.NOTIFY_TEST_PG_URL!;
  const schema = `t_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const url = `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;
  return { url, cleanup: () => {} };
}

/** Drops what freshDatabaseUrl made (the PostgreSQL schema; the SQLite folder). */
async function dropDatabase(url: string, cleanup: () => void): Promise<void> {
  if (url.startsWith('postgres')) {
    const store = createStore(url);
    await store.dialect.destroyData();
  }
  cleanup();
}

/** Options every test instance gets: no config file, no process env, silent logs. */
export function testOptions(database: string, extra: CreateNotifyOptions = {}): CreateNotifyOptions {
  return { database, configFile: false, envFile: false, env: {}, logLevel: 'silent', mailer: 'log', fromEmail: 'news@example.com', ...extra };
}

export interface EngineHandle {
  engine: Engine;
  url: string;
}

/**
 * Runs `suite` once per engine inside describe(`<name> [<engine>]`). The handle's url is a fresh
 * database for the whole describe block; use `withNotify`/`openNotify` for instances on it.
 */
export function forEachEngine(name: string, suite: (h: EngineHandle) => void): void {
  for (const engine of ENGINES) {
    describe(`${name} [${engine}]`, () => {
      const db = freshDatabaseUrl(engine);
      const handle: EngineHandle = { engine, url: db.url };
      after(() => dropDatabase(db.url, db.cleanup));
      suite(handle);
    });
  }
}

/** An instance on the engine's database that is closed after the describe block. */
export function useNotify(h: EngineHandle, extra: CreateNotifyOptions = {}): () => Notify {
  let notify: Notify | undefined;
  before(async () => {
    notify = await createNotify(testOptions(h.url, extra));
  });
  after(() => notify?.close());
  return () => notify!;
}

/** A migrated Store on the engine's database, closed after the block. */
export function useStore(h: EngineHandle): () => Store {
  let store: Store | undefined;
  before(async () => {
    store = createStore(h.url);
    await store.migrate();
  });
  after(() => store?.close());
  return () => store!;
}

/** A test SMTP sink and an instance that mails it, on the engine's database; both closed after the block. */
export function useSinkNotify(h: EngineHandle, extra: CreateNotifyOptions = {}): { sink: SmtpSink; notify: Notify } {
  const world = {} as { sink: SmtpSink; notify: Notify };
  before(async () => {
    world.sink = await startSmtpSink();
    world.notify = await createNotify(testOptions(h.url, { mailer: world.sink.url, ...extra }));
  });
  after(async () => {
    await world.notify?.close();
    await world.sink?.close();
  });
  return world;
}
