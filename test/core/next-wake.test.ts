import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { round, untilNext } from '../../src/cli/commands/worker-run.ts';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { nextWake } from '../../src/core/next-wake.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions, useSinkNotify } from '../helpers/engines.ts';

/**
 * How long `notify worker` sleeps between rounds: the interval, or until the earliest thing it knows
 * comes due (a deferred send's next attempt, a drip step, a scheduled start). An injected clock
 * stands for time; nothing here sleeps.
 */
forEachEngine('the worker wakes for the earliest due retry or drip step', (h) => {
  const clock = manualClock(Date.UTC(2026, 4, 1, 9));
  const interval = minutes(10);
  const world = useSinkNotify(h, { maxRetries: 3, clock });

  test('nothing due: the interval', async () => {
    const { notify } = world;
    assert.equal(await nextWake(notify.context, clock.now()), undefined);
    assert.equal(await untilNext(notify, interval, clock.now()), interval);
  });

  test("a campaign's deferred send: woken at its next attempt; not while the campaign is paused", async () => {
    const { sink, notify } = world;
    sink.failFor('slow@example.com', 1);
    await notify.contacts.upsert({ email: 'slow@example.com', lists: ['wake'] });
    const c = await notify.campaigns.create({ subject: 'Wake', text: 'hi', list: 'wake' });
    const since = clock.now();
    assert.equal((await notify.campaigns.send(c.id)).deferred, 1);
    clock.advance(20_000);
    assert.equal(await nextWake(notify.context, since), since + minutes(1));
    assert.equal(await untilNext(notify, interval, since), minutes(1) - 20_000);
    assert.equal(await untilNext(notify, 5_000, since), 5_000, 'never longer than the interval');
    await notify.campaigns.pause(c.id);
    assert.equal(await untilNext(notify, interval, since), interval, 'a paused campaign retries nothing');
    await notify.campaigns.resume(c.id);
    // the round that began after the retry came due saw it; it is not woken for again
    assert.equal(await untilNext(notify, interval, since + minutes(1)), interval);
    clock.advance(minutes(1));
    assert.equal((await notify.campaigns.send(c.id)).sent, 1);
  });

  test('a drip step: woken when it comes due (first step, retry, next step); a contact pending double opt-in is not waited for', async () => {
    const { sink, notify } = world;
    await notify.contacts.upsert({ email: 'ann@example.com' });
    await notify.contacts.upsert({ email: 'pending@example.com', status: 'pending' });
    await notify.drips.createSequence({ name: 'wake', steps: [{ delayMinutes: 3, subject: 'One', text: 'one' }] });
    const since = clock.now();
    await notify.drips.enroll({ contact: 'pending@example.com', sequence: 'wake' });
    assert.equal(await untilNext(notify, interval, since), interval, 'nothing a run would take');
    await notify.drips.enroll({ contact: 'ann@example.com', sequence: 'wake' });
    assert.equal(await untilNext(notify, interval, since), minutes(3));
    sink.failFor('ann@example.com', 1);
    clock.advance(minutes(3));
    const round = clock.now();
    assert.equal((await notify.drips.process()).retried, 1);
    assert.equal(await untilNext(notify, interval, round), minutes(1), 'the deferred step, one minute on');
  });
});

/**
 * A scheduled campaign whose start does not happen (here testMode: every run is a dry run, so it stays
 * `scheduled` with its time past) must not make the worker loop without sleeping: the round that began
 * after its time saw it, so it wakes the worker no sooner than the interval.
 */
forEachEngine('a scheduled start that stays due does not busy-loop the worker', (h) => {
  const clock = manualClock(Date.UTC(2026, 4, 1, 9));
  const interval = minutes(1);
  let notify: Notify;
  before(async () => {
    notify = await createNotify(testOptions(h.url, { clock, testMode: true }));
  });
  after(() => notify?.close());

  test('ten minutes of worker rounds on an injected clock: one round per interval, and a later start is still woken for', async () => {
    await notify.contacts.upsert({ email: 'ann@example.com' });
    const stuck = await notify.campaigns.create({ subject: 'Stuck', text: 'hi' });
    await notify.campaigns.schedule(stuck.id, new Date(clock.now() + 5_000));
    const later = await notify.campaigns.create({ subject: 'Later', text: 'hi' });
    await notify.campaigns.schedule(later.id, new Date(clock.now() + minutes(7) + 30_000));
    clock.advance(10_000);
    const end = clock.now() + minutes(10);
    const log = console.log;
    console.log = () => {};
    let rounds = 0;
    const waits: number[] = [];
    try {
      while (clock.now() < end && rounds < 100) {
        const started = clock.now();
        rounds++;
        await round(notify);
        const wait = await untilNext(notify, interval, started);
        waits.push(wait);
        clock.advance(Math.max(wait, 1)); // a real worker's round takes some time too
      }
    } finally {
      console.log = log;
    }
    assert.equal((await notify.campaigns.get(stuck.id))?.status, 'scheduled', 'testMode left it as it was');
    assert.ok(rounds <= 12, `${rounds} rounds in 10 minutes (waits ${waits.slice(0, 5).join(', ')} ms ...)`);
    // rounds at 0:10, 1:10 ... 7:10 after the hour; the later start at 7:30 shortens one sleep to 20 s
    assert.ok(waits.includes(20_000), `woken for the later start (waits ${waits.join(', ')})`);
  });
});
