import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { holdingMailer, sendRows } from './helpers.ts';

const N = 150;

// The batch path the CSV import uses: one statement per batch instead of one round trip per contact.
async function seed(notify: Notify, list: string, n = N): Promise<void> {
  const items = Array.from({ length: n }, (_, i) => ({ input: { email: `${list}${i}@example.com`, lists: [list] } }));
  await createContactsService(notify.context).upsertMany(items);
}

const once = (addresses: string[]) => new Set(addresses).size === addresses.length;

forEachEngine('pause and resume', (h) => {
  // `admin` pauses and resumes; `runner` is another instance (another process, as far as the
  // database can tell) whose mail server holds the sends in flight until the test lets them go
  let admin: Notify;
  let sink: SmtpSink;
  before(async () => {
    sink = await startSmtpSink({ parse: false });
    admin = await createNotify(testOptions(h.url, { mailer: sink.url, batchSize: 1000 }));
    await seed(admin, 'p');
    await seed(admin, 'r');
  });
  after(async () => {
    await admin.close();
    await sink.close();
  });

  test('pause from another instance mid-run: it returns once nothing more leaves; resume sends the rest, nobody twice', async () => {
    const hold = holdingMailer(40);
    const runner = await createNotify(testOptions(h.url, { mailer: hold.mailer, batchSize: 1000 }));
    try {
      const c = await admin.campaigns.create({ subject: 'Pause me', text: 'hello', list: 'p' });
      const run = runner.campaigns.send(c.id);
      await hold.held;
      const pausing = admin.campaigns.pause(c.id);
      // the held sends complete only now: pause cannot have returned before them
      setTimeout(hold.release, 300);
      const paused = await pausing;
      assert.equal(paused.status, 'paused');
      const atPause = hold.delivered.length;
      const result = await run;
      assert.equal(hold.delivered.length, atPause, 'no message left after pause returned');
      assert.ok(atPause >= 40 && atPause < N, `stopped mid-run (${atPause} of ${N})`);
      assert.equal(result.status, 'paused');
      assert.equal(result.note, `campaign ${c.id} was paused during this run; it stopped after the sends in flight`);
      assert.equal(result.sent, atPause);

      const rows = await sendRows(admin, c.id);
      assert.ok(
        rows.every((r) => r.status === 'sent'),
        'claimed rows not handed to the mailer were given back, none left sending',
      );
      assert.equal(rows.length, atPause);
      assert.deepEqual(await admin.campaigns.getCampaignStats(c.id), { total: atPause, sent: atPause, failed: 0, opened: 0, clicked: 0 });
      assert.deepEqual(await admin.campaigns.audience(c.id), { count: N - atPause });

      const idle = await runner.campaigns.send(c.id);
      assert.equal(idle.sent, 0);
      assert.match(idle.note ?? '', /is paused; resume it to continue/);

      assert.equal((await admin.campaigns.resume(c.id)).status, 'sending');
      const rest = await runner.campaigns.send(c.id);
      assert.equal(rest.sent, N - atPause);
      assert.equal(rest.done, true);
      assert.equal(hold.delivered.length, N);
      assert.ok(once(hold.delivered), 'nobody got it twice');
      assert.deepEqual(await admin.campaigns.getCampaignStats(c.id), { total: N, sent: N, failed: 0, opened: 0, clicked: 0 });
    } finally {
      await runner.close();
    }
  });

  test('two resume calls racing: one resumes, the other is INVALID_STATE; two workers then send each contact once', async () => {
    const other = await createNotify(testOptions(h.url, { mailer: sink.url, batchSize: 1000 }));
    try {
      const c = await admin.campaigns.create({ subject: 'Race', text: 'hello', list: 'r' });
      await admin.campaigns.schedule(c.id, new Date(Date.now() + 3_600_000));
      await admin.campaigns.pause(c.id);
      // paused before its time: resume would wait for that time again; move it to now
      await admin.context.store.campaigns.transition(c.id, ['paused'], 'paused', { send_at: null }, Date.now());
      const outcomes = await Promise.allSettled([admin.campaigns.resume(c.id), other.campaigns.resume(c.id)]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(won.length, 1);
      assert.equal(lost.length, 1);
      assert.ok(isNotifyError((lost[0] as PromiseRejectedResult).reason, 'INVALID_STATE'));
      assert.match((lost[0] as PromiseRejectedResult).reason.message, /it is sending/);

      const before = sink.messages.length;
      const [a, b] = await Promise.all([admin.campaigns.send(c.id), other.campaigns.send(c.id)]);
      assert.equal(a.sent + b.sent, N);
      await sink.waitFor(before + N);
      const to = sink.messages.slice(before).flatMap((m) => m.envelope.to);
      assert.equal(to.length, N);
      assert.ok(once(to));
      assert.equal((await admin.campaigns.get(c.id))?.status, 'sent');
    } finally {
      await other.close();
    }
  });

  test('cancel mid-run is final: nothing more leaves, resume and send refuse', async () => {
    const hold = holdingMailer(20);
    const runner = await createNotify(testOptions(h.url, { mailer: hold.mailer, batchSize: 1000 }));
    try {
      await admin.lists.create({ name: 'x' });
      await seed(admin, 'x', 60);
      const c = await admin.campaigns.create({ subject: 'Cancel me', text: 'hello', list: 'x' });
      const run = runner.campaigns.send(c.id);
      await hold.held;
      const cancelling = admin.campaigns.cancel(c.id);
      setTimeout(hold.release, 300);
      assert.equal((await cancelling).status, 'cancelled');
      const atCancel = hold.delivered.length;
      await run;
      assert.equal(hold.delivered.length, atCancel);
      await assert.rejects(admin.campaigns.resume(c.id), (e) => isNotifyError(e, 'INVALID_STATE') && /it is cancelled/.test(e.message));
      assert.equal((await runner.campaigns.send(c.id)).sent, 0);
      assert.equal(hold.delivered.length, atCancel);
    } finally {
      await runner.close();
    }
  });
});
