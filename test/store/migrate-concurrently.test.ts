import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { isNotifyError } from '../../src/errors.ts';
import { createStore } from '../../src/store/index.ts';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { compiledEntry } from '../helpers/compiled-entry.ts';
import { ENGINES, freshDatabaseUrl } from '../helpers/engines.ts';

// bundled: each of the many child processes starts on plain node, without tsx's second of CPU
const CHILD = compiledEntry(new URL('../fixtures/migrate-child.ts', import.meta.url).pathname);
const PROCESSES = 4;
const ROUNDS = 5;

interface Outcome {
  code: number | null;
  out: string;
  err: string;
}

function startChild(database: string, goFile: string): { child: ChildProcess; ready: Promise<void>; done: Promise<Outcome> } {
  const child = spawn(process.execPath, [CHILD], {
    env: { ...process.env, CHILD_DATABASE: database, CHILD_GO_FILE: goFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void;
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  child.stdout!.on('data', (d) => {
    out += d;
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const done = new Promise<Outcome>((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
  // a child that dies while loading must not leave the parent waiting for its "ready"
  void done.then(() => onReady());
  return { child, ready, done };
}

/** Starts the processes, lets them all load, then releases them together. */
async function migrateAtOnce(database: string): Promise<Outcome[]> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-go-'));
  const goFile = join(dir, 'go');
  try {
    const children = Array.from({ length: PROCESSES }, () => startChild(database, goFile));
    await Promise.all(children.map((c) => c.ready));
    writeFileSync(goFile, '');
    return await Promise.all(children.map((c) => c.done));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The engines share nothing (each round a fresh database) and mostly wait for their child processes,
// so they run side by side. (The lock case below stays after them: better-sqlite3 waits out the busy
// timeout on this process's thread, which would hold up everything beside it.)
describe('migrating concurrently', { concurrency: true }, () => {
  for (const engine of ENGINES) {
    describe(`migrating concurrently [${engine}]`, { concurrency: 1 }, () => {
      test(`${PROCESSES} processes starting at once on a fresh database all come up, and each migration runs once`, { timeout: 180_000 }, async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const db = freshDatabaseUrl(engine);
          try {
            const outcomes = await migrateAtOnce(db.url);
            for (const o of outcomes) assert.equal(o.code, 0, `round ${round}: a process failed: ${o.out}${o.err}`);
            const applied = outcomes.flatMap((o) => (JSON.parse(o.out.split('\n')[1]) as { applied: string[] }).applied);
            assert.deepEqual([...applied].sort(), Object.keys(MIGRATIONS), `round ${round}: each migration is applied by exactly one process`);
            const store = createStore(db.url);
            try {
              const rows = await store.db
                .selectFrom('notify_migrations' as never)
                .select(['name' as never])
                .execute();
              assert.deepEqual(rows.map((r) => (r as { name: string }).name).sort(), Object.keys(MIGRATIONS));
              assert.deepEqual((await store.migrate()).applied, []);
            } finally {
              if (engine === 'postgres') await store.dialect.destroyData();
              else await store.close();
            }
          } finally {
            db.cleanup();
          }
        }
      });
    });
  }
});

test('a process that waits longer than the busy timeout for the write lock fails clearly, and migrates once it is free [sqlite]', { timeout: 60_000 }, async () => {
  const db = freshDatabaseUrl('sqlite');
  const file = db.url.replace(/^sqlite:/, '');
  try {
    const first = createStore(db.url);
    await first.migrate();
    await first.close();
    // another process in the middle of a long write (a migration, a big import)
    const holder = new BetterSqlite3(file);
    holder.exec('begin immediate');
    const store = createStore(db.url);
    try {
      const started = Date.now();
      await assert.rejects(
        store.migrate(),
        (err) => isNotifyError(err, 'STORE_UNAVAILABLE') && /Another process held the write lock of .*notify\.db for more than 10000 ms; migrations did not start/.test(err.message),
      );
      assert.ok(Date.now() - started >= 9_000, 'it waited for the lock before giving up');
      holder.exec('rollback');
      assert.deepEqual((await store.migrate()).applied, []);
      const rows = await store.db.selectFrom('notify_migrations' as never).select(['name' as never]).execute();
      assert.equal(rows.length, Object.keys(MIGRATIONS).length);
    } finally {
      holder.close();
      await store.close();
    }
  } finally {
    db.cleanup();
  }
});
