// The wait of pause and cancel for the sends in flight gives up when a mail server does not answer:
// it returns the count of sends still held instead of waiting for ever.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitForRunsToStop } from '../../src/core/campaign-control.ts';
import { createNotify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { holdingMailer } from './helpers.ts';

forEachEngine('waiting for a campaign\'s runs to stop', (h) => {
  test('a send held at the mail server past the wait: the rows still held are returned once the wait runs out', { timeout: 20_000 }, async (t) => {
    const hold = holdingMailer(1);
    const notify = await createNotify(testOptions(h.url, { mailer: hold.mailer }));
    t.after(() => notify.close());
    await notify.contacts.upsert({ email: 'held@example.com', lists: ['held'] });
    const c = await notify.campaigns.create({ subject: 'Held', text: 'x', list: 'held' });
    const run = notify.campaigns.send(c.id);
    await hold.held;
    const started = Date.now();
    assert.equal(await waitForRunsToStop(notify.context, c.id, 200), 1);
    assert.ok(Date.now() - started >= 200, 'it waited the time given');
    hold.release();
    assert.equal((await run).sent, 1, 'the send in flight still ends and is recorded');
    assert.equal(await waitForRunsToStop(notify.context, c.id, 200), 0);
  });
});
