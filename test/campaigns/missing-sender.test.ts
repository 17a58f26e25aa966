import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { round } from '../../src/cli/commands/worker-run.ts';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { sendRows, silenceConsole } from './helpers.ts';

const T0 = Date.UTC(2026, 4, 1, 8, 0);
const missingSender = (e: unknown) => isNotifyError(e, 'MISSING_SENDER') && /NOTIFY_FROM_EMAIL/.test(e.message);

/**
 * No from address anywhere (neither the fromEmail option nor the campaign's own): found before any
 * send, so the campaign is left where a person can see why and fix it, and no worker retries it.
 */
forEachEngine('a campaign with no from address', (h) => {
  const clock = manualClock(T0);
  let notify: Notify;
  before(async () => {
    notify = await createNotify({ ...testOptions(h.url, { fromEmail: '' }), clock });
    for (const name of ['ann', 'bob']) await notify.contacts.upsert({ email: `${name}@example.com`, lists: ['news'] });
  });
  test.after(() => notify.close());

  test('a run of a draft throws MISSING_SENDER and leaves it a draft, with no send row', async () => {
    const c = await notify.campaigns.create({ subject: 'Hi', text: 'hello', list: 'news' });
    await assert.rejects(notify.campaigns.send(c.id), missingSender);
    assert.equal((await notify.campaigns.get(c.id))?.status, 'draft');
    assert.deepEqual(await sendRows(notify, c.id), []);
    assert.deepEqual(await notify.campaigns.list({ status: 'sending' }), [], 'no worker would pick it up');
  });

  test('a due scheduled one is paused by the worker with the reason, tried once, and sends after a sender is set and it is resumed', async () => {
    const restore = silenceConsole();
    try {
      const c = await notify.campaigns.create({ subject: 'Later', text: 'hello', list: 'news' });
      await notify.campaigns.schedule(c.id, new Date(T0 + minutes(10)));
      clock.advance(minutes(10));
      await round(notify);
      const paused = await notify.campaigns.get(c.id);
      assert.equal(paused?.status, 'paused');
      assert.match(paused?.status_reason ?? '', /^not started: no from address/);
      assert.deepEqual(await sendRows(notify, c.id), []);
      assert.equal((await notify.campaigns.list({ status: 'paused' })).find((x) => x.id === c.id)?.status_reason, paused?.status_reason, 'campaigns:list shows it');

      await notify.campaigns.update(c.id, { fromEmail: 'news@example.com' });
      await notify.campaigns.resume(c.id);
      await round(notify);
      assert.deepEqual((await sendRows(notify, c.id)).map((r) => r.status), ['sent', 'sent']);
      assert.equal((await notify.campaigns.get(c.id))?.status, 'sent');
    } finally {
      restore();
    }
  });

  test('one left sending (its sender removed from the configuration meanwhile) is paused with the reason on its next run', async () => {
    const c = await notify.campaigns.create({ subject: 'Midway', text: 'hello', list: 'news' });
    await notify.context.store.campaigns.transition(c.id, ['draft'], 'sending', {}, clock.now());
    const r = await notify.campaigns.send(c.id);
    assert.equal(r.sent, 0);
    assert.equal(r.status, 'paused');
    assert.match(r.note ?? '', /no from address.*paused/);
    const after = await notify.campaigns.get(c.id);
    assert.equal(after?.status, 'paused');
    assert.match(after?.status_reason ?? '', /^stopped: no from address/);
  });
});
