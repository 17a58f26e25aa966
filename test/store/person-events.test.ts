import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Kysely, Migrator } from 'kysely';
import { createNotify, type Notify } from '../../src/notify.ts';
import { createDialect, createStore } from '../../src/store/index.ts';
import { afterCommit, BACKFILL_KEY, backfillBatch } from '../../src/store/migrations/019_events_contact_from_send.ts';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import type { Database } from '../../src/store/schema.ts';
import { ENGINES, type Engine, freshDatabaseUrl, testOptions } from '../helpers/engines.ts';

/**
 * Which events belong to a person (contacts.export lists them, contacts.erase anonymises them),
 * pinned across the upgrade that finds them by contact alone: an event stored before it with only
 * its send's id still belongs to the send's person, one of a send without a person to nobody, and
 * nothing written or backfilled after an erasure names the erased person again.
 */
const BEFORE = Object.keys(MIGRATIONS).filter((n) => n < '019');

async function migrateTo(url: string, names: string[]): Promise<void> {
  const dialect = createDialect(url);
  try {
    await dialect.prepare();
    const migrator = new Migrator({
      db: dialect.db,
      provider: { getMigrations: async () => Object.fromEntries(names.map((n) => [n, { up: (db) => MIGRATIONS[n].up(db, { ...dialect.columns, kind: dialect.kind }) }])) },
      migrationTableSchema: await dialect.migrationTableSchema(),
      migrationTableName: 'notify_migrations',
      migrationLockTableName: 'notify_migrations_lock',
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
  } finally {
    await dialect.close();
  }
}

const metadataOf = (m: unknown) => (typeof m === 'string' ? JSON.parse(m) : m) as Record<string, unknown>;
/** an event by its mark, or its type (the open the tracking endpoint stored) */
const marks = (rows: { type?: string; metadata: unknown }[]) => rows.map((r) => String(metadataOf(r.metadata).mark ?? r.type)).sort();

function eventRow(mark: string, refs: { send_id?: number | null; contact_id?: number | null; campaign_id?: number | null }) {
  return {
    type: 'soft_bounce',
    send_id: refs.send_id ?? null,
    contact_id: refs.contact_id ?? null,
    campaign_id: refs.campaign_id ?? null,
    link_index: null,
    metadata: JSON.stringify({ mark, detail: `${mark} mailbox full` }),
    is_machine: 0,
    machine_reason: null,
    created_at: Date.now(),
  };
}

interface World {
  n: Notify;
  db: Kysely<Database>;
  ann: number;
  bob: number;
  annSend: { id: number; token: string; campaign: number };
  bobSend: number;
  orphanSend: number;
}

/**
 * A database before the upgrade: Ann and Bob got a campaign, Carl a one-off message and was then
 * erased (his send keeps no person). Events stored as the older release could: Ann's open through
 * the tracking endpoint (both ids), a provider event naming only Ann's send, one naming only Ann,
 * one naming only Bob's send, one naming only Carl's send.
 */
async function oldDatabase(engine: Engine): Promise<{ url: string; cleanup: () => void; world: World }> {
  const { url, cleanup } = freshDatabaseUrl(engine);
  await migrateTo(url, BEFORE);
  const n = await createNotify(testOptions(url, { migrate: false, trackIpAddress: true }));
  const db = n.context.store.db as Kysely<Database>;
  const ann = await n.contacts.upsert({ email: 'ann@example.com', lists: ['news'] });
  const bob = await n.contacts.upsert({ email: 'bob@example.com', lists: ['news'] });
  const campaign = await n.campaigns.create({ subject: 'Hello', html: '<p>Hi</p>', list: 'news' });
  await n.campaigns.send(campaign.id);
  const sendOf = async (contact: number) => db.selectFrom('notify_sends').select(['id', 'token']).where('contact_id', '=', contact).executeTakeFirstOrThrow();
  const a = await sendOf(ann.id);
  const b = await sendOf(bob.id);
  const carl = await n.send({ to: 'carl@example.com', subject: 'Receipt', text: 'x' });
  assert.equal(await n.contacts.erase('carl@example.com'), true);
  await n.fetch(new Request(`http://localhost/notify/open/${a.token}`, { headers: { 'x-forwarded-for': '203.0.113.9' } }));
  await n.flush();
  await db
    .insertInto('notify_events')
    .values([
      eventRow('ann-send-only', { send_id: Number(a.id), campaign_id: campaign.id }),
      eventRow('ann-contact-only', { contact_id: ann.id }),
      eventRow('bob-send-only', { send_id: Number(b.id), campaign_id: campaign.id }),
      eventRow('carl-send-no-person', { send_id: carl.id }),
    ])
    .execute();
  const world = { n, db, ann: ann.id, bob: bob.id, annSend: { id: Number(a.id), token: a.token, campaign: campaign.id }, bobSend: Number(b.id), orphanSend: carl.id };
  return { url, cleanup, world };
}

async function dropDatabase(url: string, cleanup: () => void): Promise<void> {
  await createStore(url).dialect.destroyData();
  cleanup();
}

for (const engine of ENGINES) {
  describe(`a person's events across the upgrade [${engine}]`, () => {
    test('export lists and erase anonymises the same events as before: by send or by contact, nobody for a send without a person', async () => {
      const { url, cleanup, world } = await oldDatabase(engine);
      const { n, db } = world;
      try {
        await n.context.store.migrate();
        const ann = await n.contacts.export(world.ann);
        assert.deepEqual(marks(ann!.events), ['ann-contact-only', 'ann-send-only', 'open']);
        assert.deepEqual(marks((await n.contacts.export(world.bob))!.events), ['bob-send-only']);

        assert.equal(await n.contacts.erase(world.ann), true);
        const all = await db.selectFrom('notify_events').select(['type', 'send_id', 'contact_id', 'metadata']).orderBy('id').execute();
        const anonymous = all.filter((e) => Object.keys(metadataOf(e.metadata)).length === 0);
        assert.equal(anonymous.length, 3, 'her three events, and only those, lose their metadata');
        for (const e of anonymous) assert.equal(e.contact_id, null);
        assert.deepEqual(marks(all.filter((e) => !anonymous.includes(e))), ['bob-send-only', 'carl-send-no-person']);
        assert.deepEqual(marks((await n.contacts.export(world.bob))!.events), ['bob-send-only'], 'Bob keeps his');
        const dump = JSON.stringify(all);
        assert.ok(!/ann-|ann@/.test(dump), 'nothing left names her');
      } finally {
        await n.close();
        await dropDatabase(url, cleanup);
      }
    });

    test('the upgrade gives each event of a send its person, in batches of their own; a send without a person gives none', async () => {
      const { url, cleanup, world } = await oldDatabase(engine);
      const { n, db } = world;
      try {
        const dialect = n.context.store.dialect;
        const events = () => db.selectFrom('notify_events').select(['id', 'contact_id', 'metadata', 'type']).orderBy('id').execute();
        const upTo = Math.max(...(await events()).map((e) => Number(e.id)));
        // 019 alone, as the migrator runs it, then the backfill one event per transaction
        await migrateTo(url, [...BEFORE, '019_events_contact_from_send']);
        const cursor = async () => (await db.selectFrom('notify_meta').select('value').where('key', '=', BACKFILL_KEY).executeTakeFirst())?.value;
        assert.deepEqual(JSON.parse((await cursor())!), { after: 0, upTo });
        const byMark = async () => new Map((await events()).map((e) => [marks([e])[0], e.contact_id === null ? null : Number(e.contact_id)]));
        assert.equal((await byMark()).get('ann-send-only'), null, 'nothing changed inside the migrator');
        let batches = 0;
        while (!(await backfillBatch(dialect, 1))) {
          batches++;
          assert.deepEqual(JSON.parse((await cursor())!), { after: batches, upTo });
        }
        assert.equal(batches, upTo - 1);
        assert.equal(await cursor(), undefined, 'done: nothing left to resume');
        const people = await byMark();
        assert.deepEqual(
          ['ann-send-only', 'ann-contact-only', 'open', 'bob-send-only', 'carl-send-no-person'].map((m) => people.get(m)),
          [world.ann, world.ann, world.ann, world.bob, null],
        );
        const later = Object.keys(MIGRATIONS).filter((m) => m > '019_events_contact_from_send');
        assert.deepEqual((await n.context.store.migrate()).applied, later, '019 recorded as applied: only the migrations after it run');
        assert.deepEqual(marks((await n.contacts.export(world.ann))!.events), ['ann-contact-only', 'ann-send-only', 'open']);
      } finally {
        await n.close();
        await dropDatabase(url, cleanup);
      }
    });

    test('two processes backfilling at once take turns: each event filled once, the work recorded as done', async () => {
      const { url, cleanup, world } = await oldDatabase(engine);
      const { n, db } = world;
      const other = createStore(url);
      try {
        await migrateTo(url, [...BEFORE, '019_events_contact_from_send']);
        await Promise.all([afterCommit(n.context.store.dialect, 1), afterCommit(other.dialect, 1)]);
        assert.equal((await db.selectFrom('notify_meta').select('value').where('key', '=', BACKFILL_KEY).executeTakeFirst())?.value, undefined);
        const rows = await db.selectFrom('notify_events').select(['contact_id', 'metadata', 'type']).execute();
        assert.deepEqual(
          rows.filter((r) => r.contact_id === null).map((r) => marks([r])[0]),
          ['carl-send-no-person'],
        );
      } finally {
        await other.close();
        await n.close();
        await dropDatabase(url, cleanup);
      }
    });

    test('a backfill batch that meets an erasure in progress waits for it and leaves the erased events anonymous', async () => {
      const { url, cleanup, world } = await oldDatabase(engine);
      const { n, db } = world;
      const other = createStore(url);
      try {
        await migrateTo(url, [...BEFORE, '019_events_contact_from_send']);
        let batch: Promise<boolean> | undefined;
        // what contacts.erase does to her sends and events, with the backfill started in the middle
        await db.transaction().execute(async (trx) => {
          await n.context.store.dialect.lockForUpdate(trx.selectFrom('notify_sends').select('id').where('contact_id', '=', world.ann).orderBy('id')).execute();
          await trx.updateTable('notify_events').set({ metadata: '{}', contact_id: null }).where('send_id', '=', world.annSend.id).execute();
          await trx.updateTable('notify_events').set({ metadata: '{}', contact_id: null }).where('contact_id', '=', world.ann).execute();
          await trx.updateTable('notify_sends').set({ contact_id: null }).where('id', '=', world.annSend.id).execute();
          if (engine === 'postgres') {
            batch = backfillBatch(other.dialect, 1000);
            await new Promise((r) => setTimeout(r, 300));
          }
        });
        assert.equal(await (batch ?? backfillBatch(other.dialect, 1000)), true);
        const hers = await db.selectFrom('notify_events').select('contact_id').where('send_id', '=', world.annSend.id).execute();
        assert.deepEqual(
          hers.map((e) => e.contact_id),
          [null, null],
        );
        assert.equal((await db.selectFrom('notify_events').select('id').where('contact_id', '=', world.bob).execute()).length, 1, "Bob's is filled");
      } finally {
        await other.close();
        await n.close();
        await dropDatabase(url, cleanup);
      }
    });

    test('after the upgrade a writer naming only the send names its person; nothing names an erased person again', async () => {
      const { url, cleanup, world } = await oldDatabase(engine);
      const { n, db } = world;
      try {
        await n.context.store.migrate();
        const write = (mark: string, send: number) => n.context.store.transaction((tx) => tx.events.insertMany([{ ...eventRow(mark, { send_id: send }), metadata: { mark } }]));
        await write('ann-report', world.annSend.id);
        await write('carl-report', world.orphanSend);
        const contactOf = async (mark: string) => {
          const rows = await db.selectFrom('notify_events').select(['contact_id', 'metadata', 'type']).execute();
          const row = rows.find((r) => marks([r])[0] === mark);
          return row?.contact_id === null || row === undefined ? row && null : Number(row.contact_id);
        };
        assert.equal(await contactOf('ann-report'), world.ann);
        assert.equal(await contactOf('carl-report'), null);
        // a send id that names no send: SQLite's foreign key refuses it, PostgreSQL (none since 016) stores it as given
        if (engine === 'sqlite') await assert.rejects(write('no-such-send', 987_654_321), /FOREIGN KEY/);
        else {
          await write('no-such-send', 987_654_321);
          assert.equal(await contactOf('no-such-send'), null);
        }
        assert.deepEqual(marks((await n.contacts.export(world.ann))!.events), ['ann-contact-only', 'ann-report', 'ann-send-only', 'open']);

        assert.equal(await n.contacts.erase(world.ann), true);
        // after the erasure: a report on her old send, an open of it, and the backfill run again over everything
        await write('late-report', world.annSend.id);
        await n.fetch(new Request(`http://localhost/notify/open/${world.annSend.token}`));
        await n.flush();
        const last = await db.selectFrom('notify_events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow();
        await db.insertInto('notify_meta').values({ key: BACKFILL_KEY, value: JSON.stringify({ after: 0, upTo: Number(last.id) }) }).execute();
        await n.context.store.migrate();
        const hers = await db.selectFrom('notify_events').select(['type', 'contact_id', 'metadata']).where('send_id', '=', world.annSend.id).execute();
        assert.equal(hers.length, 5, 'her send keeps its events for the campaign figures');
        assert.deepEqual(
          hers.map((e) => e.contact_id),
          [null, null, null, null, null],
        );
        assert.equal(await contactOf('bob-send-only'), world.bob);
        assert.equal((await db.selectFrom('notify_events').select('id').where('contact_id', '=', world.ann).execute()).length, 0);
      } finally {
        await n.close();
        await dropDatabase(url, cleanup);
      }
    });
  });
}
