import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { createNotify, type Notify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { AJAX, capture, form } from '../capture/helpers.ts';
import { providerRigs } from '../e2e/webhook-requests.ts';
import { call } from '../helpers/http.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Another process on the file that takes its write lock and keeps it for `holdMs` (a starting
 * process's migrator, a worker's claim); resolves once the lock is taken, `released` once it is not.
 */
async function holdWriteLock(file: string, holdMs: number): Promise<{ released: Promise<number | null> }> {
  const script = `const db = new (require('better-sqlite3'))(process.argv[1]); db.exec('begin immediate'); console.log('locked'); setTimeout(() => { db.exec('commit'); db.close(); }, ${holdMs});`;
  const child = spawn(process.execPath, ['-e', script, file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const released = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => String(d).includes('locked') && resolve());
    void released.then((code) => reject(new Error(`the lock holder exited ${code} before taking the lock`)));
  });
  return { released };
}

// A transaction that reads before it writes (an upsert looks the address up first) used to begin
// DEFERRED: its read took a snapshot, and SQLite refuses to turn a read into a write while another
// connection holds the write lock, at once, without waiting out busy_timeout. The capture form
// answered 500 while another process migrated on start.
describe('SQLite: writes that read first wait for another process holding the write lock', () => {
  const db = freshDatabaseUrl('sqlite');
  const file = db.url.replace(/^sqlite:/, '');
  let notify: Notify;
  before(async () => {
    notify = await createNotify(testOptions(db.url));
  });
  after(async () => {
    await notify?.close();
    db.cleanup();
  });

  test('a contact upsert (read, then write) lands once the other process commits', async () => {
    const { released } = await holdWriteLock(file, 400);
    const contact = await notify.contacts.upsert({ email: 'waited@example.com', lists: ['news'] });
    assert.equal(await released, 0, 'the other process committed and exited');
    assert.equal(contact.status, 'subscribed');
    assert.equal((await notify.contacts.get('waited@example.com'))?.id, contact.id);
  });

  test('an update of a known contact (read, then write) lands too', async () => {
    await notify.contacts.upsert({ email: 'known@example.com' });
    const { released } = await holdWriteLock(file, 400);
    const contact = await notify.contacts.upsert({ email: 'known@example.com', name: 'Known', lists: ['news'] });
    assert.equal(await released, 0);
    assert.equal(contact.name, 'Known');
    assert.equal((await notify.contacts.get('known@example.com'))?.name, 'Known');
  });

  /**
   * Runs `fn` while a connection of this process holds the write lock, with the process's one
   * connection to the file (shared by every store opened on it) giving up after 200 ms instead of
   * 10 s; the holder is in this process, so the waiting blocks nothing the test needs. `release`
   * ends the hold early.
   */
  async function pastBusyTimeout(fn: (release: () => void) => Promise<void>): Promise<void> {
    const shared = createStore(db.url);
    await sql`pragma busy_timeout = 200`.execute(shared.db);
    const holder = new BetterSqlite3(file);
    const release = () => holder.inTransaction && holder.exec('rollback');
    try {
      holder.exec('begin immediate');
      await fn(release);
    } finally {
      release();
      holder.close();
      await sql`pragma busy_timeout = 10000`.execute(shared.db);
      await shared.close();
    }
  }

  test('a lock held past busy_timeout: the capture form answers 503 unavailable with Retry-After, stores nothing, and the same post goes through later', async () => {
    await pastBusyTimeout(async (release) => {
      const refused = await capture(notify, form({ email: 'later@example.com' }), AJAX);
      assert.equal(refused.status, 503);
      assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After says when to post again');
      assert.deepEqual(await refused.json(), { ok: false, code: 'unavailable', errors: ['Sorry, we could not save your sign-up right now. Please try again later.'] });
      release();
      assert.equal(await notify.contacts.get('later@example.com'), undefined, 'nothing stored');
      assert.equal((await capture(notify, form({ email: 'later@example.com' }), AJAX)).status, 200);
      assert.equal((await notify.contacts.get('later@example.com'))?.status, 'subscribed');
    });
  });

  test('a lock held past busy_timeout: an unsubscribe link answers 503 with Retry-After, changes nothing, and works later', async () => {
    const contact = await notify.contacts.upsert({ email: 'leaving@example.com' });
    const link = `/notify/unsubscribe/${contact.unsubscribe_token}`;
    await pastBusyTimeout(async (release) => {
      const refused = await call(notify, link, { method: 'POST' });
      assert.equal(refused.status, 503);
      assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After says when to try again');
      release();
      assert.equal((await notify.contacts.get(contact.id))?.status, 'subscribed', 'nothing changed');
    });
    assert.equal((await call(notify, link, { method: 'POST' })).status, 200);
    assert.equal((await notify.contacts.get(contact.id))?.status, 'unsubscribed');
  });
  test('a lock held past busy_timeout: a provider webhook answers 503 with Retry-After, applies nothing, and the redelivery is applied', async () => {
    const { postmark } = providerRigs();
    const hooks = await createNotify(testOptions(db.url, postmark.config));
    try {
      await hooks.contacts.upsert({ email: 'bounced-later@example.com' });
      await pastBusyTimeout(async (release) => {
        const refused = await call(hooks, '/notify/webhook', postmark.bounce('bounced-later@example.com'));
        assert.equal(refused.status, 503, 'the provider is told to redeliver');
        assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After says when to redeliver');
        release();
        assert.equal((await hooks.contacts.get('bounced-later@example.com'))?.status, 'subscribed', 'nothing applied');
      });
      assert.equal((await call(hooks, '/notify/webhook', postmark.bounce('bounced-later@example.com'))).status, 200);
      assert.equal((await hooks.contacts.get('bounced-later@example.com'))?.status, 'bounced');
    } finally {
      await hooks.close();
    }
  });
});
