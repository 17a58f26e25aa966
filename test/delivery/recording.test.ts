import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import type { Mailer } from '../../src/core/mailer.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';

const PEOPLE = 20;
/** the message that waits to see earlier outcomes written (the pool has 8 in flight) */
const WATCHER = 12;

/** True once `check` holds, false after `ms`. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) if (await check()) return true;
  return false;
}

/**
 * A mailer whose WATCHER-th message does not leave until the store shows five outcomes written:
 * outcomes recorded per chunk would only be written after it, so it would wait in vain.
 */
function watchingMailer(written: () => Promise<number>) {
  const state = { sends: 0, sawWritten: undefined as boolean | undefined };
  const mailer: Mailer = {
    name: 'watching',
    async send(m) {
      if (++state.sends === WATCHER) state.sawWritten = await eventually(async () => (await written()) >= 5, 3000);
      return { messageId: m.messageId };
    },
  };
  return { mailer, state };
}

forEachEngine('each outcome is recorded as it happens, not at the end of its chunk', (h) => {
  let notify: Notify;
  let watch: ReturnType<typeof watchingMailer>;
  let count = async () => 0;
  before(async () => {
    watch = watchingMailer(() => count());
    notify = await createNotify(testOptions(h.url, { mailer: watch.mailer, batchSize: 200 }));
    for (let i = 0; i < PEOPLE; i++) await notify.contacts.upsert({ email: `r${i}@example.com`, lists: ['rec'] });
  });
  after(() => notify.close());

  test(`a campaign: while message ${WATCHER} of one ${PEOPLE}-row chunk is in flight, earlier ones are already 'sent' rows`, async () => {
    const db = notify.context.store.db;
    const c = await notify.campaigns.create({ subject: 'Rec', html: '<p>x</p>', list: 'rec' });
    count = async () => Number((await db.selectFrom('notify_sends').select((eb) => eb.fn.countAll<number>().as('n')).where('campaign_id', '=', c.id).where('status', '=', 'sent').executeTakeFirstOrThrow()).n);
    watch.state.sends = 0;
    const run = await notify.campaigns.send(c.id);
    assert.equal(run.sent, PEOPLE);
    assert.equal(watch.state.sawWritten, true);
    assert.equal(await count(), PEOPLE);
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: PEOPLE, sent: PEOPLE, failed: 0, opened: 0, clicked: 0 });
  });

  test(`drips: while step ${WATCHER} is in flight, earlier enrollments have already moved on`, async () => {
    const db = notify.context.store.db;
    const seq = await notify.drips.createSequence({ name: 'rec', steps: [{ delayMinutes: 0, subject: 'One', html: '<p>x</p>' }] });
    for (let i = 0; i < PEOPLE; i++) await notify.drips.enroll({ contact: `r${i}@example.com`, sequence: seq.id });
    count = async () => Number((await db.selectFrom('notify_enrollments').select((eb) => eb.fn.countAll<number>().as('n')).where('sequence_id', '=', seq.id).where('status', '=', 'completed').executeTakeFirstOrThrow()).n);
    watch.state.sends = 0;
    const run = await notify.drips.process();
    assert.equal(run.sent, PEOPLE);
    assert.equal(watch.state.sawWritten, true);
    assert.equal(await count(), PEOPLE);
  });
});
