import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { applyWebhookEvents } from '../../src/core/webhook-events.ts';
import { forEachEngine, useSinkNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';

/**
 * A send waiting for another try (`deferred` after an SMTP 421) whose contact is then suppressed,
 * by a bounce or complaint webhook, the unsubscribe link, or a status written by the API: it is
 * cancelled, never delivered later, for a drip step and for a campaign send alike. The sink
 * refuses RCPT TO per address.
 */
forEachEngine('a deferred send whose contact is suppressed is never delivered', (h) => {
  const clock = manualClock(Date.UTC(2026, 4, 1, 9));
  const world = useSinkNotify(h, { maxRetries: 3, retryDelayMinutes: 5, clock });
  let n = 0;
  const attempts = (email: string) => world.sink.attempts.get(email) ?? 0;
  const delivered = (email: string) => world.sink.messages.filter((m) => m.envelope.to.includes(email)).length;

  /** `email` enrolled in a fresh one-step sequence, the step deferred by one 421 */
  const deferredStep = async (email: string) => {
    world.sink.failFor(email, 1);
    await world.notify.contacts.upsert({ email, name: 'Ann' });
    const name = `seq-${n++}`;
    await world.notify.drips.createSequence({ name, steps: [{ delayMinutes: 0, subject: 'Welcome', text: 'Hello' }] });
    const e = await world.notify.drips.enroll({ contact: email, sequence: name });
    assert.equal((await world.notify.drips.process()).retried, 1);
    const row = async () => world.notify.context.store.db.selectFrom('notify_sends').select(['status', 'next_attempt_at']).where('enrollment_id', '=', e.id).executeTakeFirstOrThrow();
    assert.equal((await row()).status, 'deferred');
    return { e, row };
  };

  /** a campaign to `email` alone, its send deferred by one 421 */
  const deferredCampaignSend = async (email: string) => {
    world.sink.failFor(email, 1);
    const list = `c${n++}`;
    await world.notify.contacts.upsert({ email, lists: [list] });
    const c = await world.notify.campaigns.create({ subject: 'News', text: 'Hello', list });
    assert.equal((await world.notify.campaigns.send(c.id)).deferred, 1);
    const row = async () => world.notify.context.store.db.selectFrom('notify_sends').select(['status', 'next_attempt_at']).where('campaign_id', '=', c.id).executeTakeFirstOrThrow();
    assert.equal((await row()).status, 'deferred');
    return { c, row };
  };

  const suppressions = {
    'a hard bounce': (email: string) => applyWebhookEvents(world.notify.context, 'postmark', [{ type: 'bounce', email, message_id: `b-${email}`, id: `b-${email}` }], `b-${email}`),
    'a complaint': (email: string) => applyWebhookEvents(world.notify.context, 'postmark', [{ type: 'complaint', email, message_id: `c-${email}`, id: `c-${email}` }], `c-${email}`),
    'the unsubscribe link': async (email: string) => {
      const contact = (await world.notify.contacts.get(email))!;
      assert.equal((await call(world.notify, `/notify/unsubscribe/${contact.unsubscribe_token}`, { method: 'POST' })).status, 200);
    },
    'a bounced status written through contacts.upsert': (email: string) => world.notify.contacts.upsert({ email, status: 'bounced' }),
  };
  for (const [how, suppress] of Object.entries(suppressions)) {
    test(`drip step deferred, then ${how}: the step is cancelled and never tried again`, async () => {
      const email = `drip-${n}@example.com`;
      const { e, row } = await deferredStep(email);
      await suppress(email);
      clock.advance(minutes(30));
      await world.notify.drips.process();
      assert.deepEqual(await row(), { status: 'cancelled', next_attempt_at: null });
      assert.equal((await world.notify.drips.getEnrollment(e.id))?.status, 'cancelled');
      clock.advance(minutes(60));
      await world.notify.drips.process();
      assert.equal(attempts(email), 1, 'the one refused attempt, nothing after');
      assert.equal(delivered(email), 0);
    });

    test(`campaign send deferred, then ${how}: no longer waiting, never delivered, the campaign ends`, async () => {
      const email = `camp-${n}@example.com`;
      const { c, row } = await deferredCampaignSend(email);
      await suppress(email);
      // every way, contacts.upsert too, is the one suppression flow: settled at once
      assert.deepEqual(await row(), { status: 'suppressed', next_attempt_at: null }, 'no longer waiting for a retry');
      const r = await world.notify.campaigns.send(c.id);
      assert.deepEqual([r.sent, r.waiting, r.status], [0, 0, 'sent'], 'nothing left to wait for');
      clock.advance(minutes(30));
      await world.notify.campaigns.send(c.id);
      assert.deepEqual(await row(), { status: 'suppressed', next_attempt_at: null });
      assert.equal(await world.notify.campaigns.get(c.id).then((x) => x?.status), 'sent');
      assert.equal(attempts(email), 1, 'the one refused attempt, nothing after');
      assert.equal(delivered(email), 0);
      assert.deepEqual(await world.notify.campaigns.getCampaignStats(c.id), { total: 1, sent: 0, failed: 0, opened: 0, clicked: 0 });
    });
  }
});
