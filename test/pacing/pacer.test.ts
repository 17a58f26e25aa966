import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import type { PaceRule } from '../../src/core/pacer.ts';
import { createPacer, type PacingStore, pacingStores } from '../../src/pacing/index.ts';
import { busiestWindow, rateOf } from '../helpers/windows.ts';

/**
 * A made-up clock and a sleep on it: once every sender has gone to sleep (nothing left to run),
 * the earliest sleeper wakes with the clock at its due time, like timers on a real clock.
 */
function fakeTime() {
  const clock = manualClock(Date.UTC(2026, 10, 24, 12));
  const sleepers: { due: number; wake: () => void }[] = [];
  let scheduled = false;
  const wakeEarliest = () => {
    scheduled = false;
    sleepers.sort((a, b) => a.due - b.due);
    const first = sleepers.shift();
    if (!first) return;
    if (clock.now() < first.due) clock.set(first.due);
    first.wake();
    schedule();
  };
  const schedule = () => {
    if (!scheduled && sleepers.length > 0) {
      scheduled = true;
      setImmediate(wakeEarliest);
    }
  };
  const sleep = (ms: number) =>
    new Promise<void>((wake) => {
      sleepers.push({ due: clock.now() + ms, wake });
      schedule();
    });
  return { clock, sleep };
}

const memory = () => pacingStores.create('memory', { store: undefined as never, log: undefined as never });

/** A store that counts the calls it gets. */
function counting(store: PacingStore): PacingStore & { calls: PaceRule[][] } {
  const calls: PaceRule[][] = [];
  const take: PacingStore['take'] = (rules, now, id) => {
    calls.push([...rules]);
    return store.take(rules, now, id);
  };
  return { ...store, calls, take };
}

describe('pacer', () => {
  test('sendRate 0 and no domain rates: no pacer at all (the delivery loop does no pacing work)', () => {
    const { clock } = fakeTime();
    assert.equal(createPacer({ sendRate: 0, domainRates: {} }, memory(), { clock }), undefined);
  });

  test('sendRate 20: 200 messages from 8 concurrent senders, never more than 20 in any second, at the rate', async () => {
    const { clock, sleep } = fakeTime();
    const pacer = createPacer({ sendRate: 20, domainRates: {} }, memory(), { clock, sleep })!;
    const grants: number[] = [];
    let left = 200;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (left-- > 0) {
          const left = await pacer.acquire(['someone@example.com']);
          grants.push(clock.now());
          left();
        }
      }),
    );
    assert.equal(grants.length, 200);
    assert.ok(busiestWindow(grants) <= 20, `busiest second: ${busiestWindow(grants)}`);
    const rate = rateOf(grants);
    assert.ok(Math.abs(rate - 20) < 0.1, `rate ${rate}`);
  });

  test('domainRates: gmail.com at 5 while other domains use the rest of sendRate 20', async () => {
    const { clock, sleep } = fakeTime();
    const pacer = createPacer({ sendRate: 20, domainRates: { 'gmail.com': 5 } }, memory(), { clock, sleep })!;
    const byDomain: Record<string, number[]> = { gmail: [], other: [] };
    const all: number[] = [];
    const sender = (address: string, times: number[], n: number) => async () => {
      for (let i = 0; i < n; i++) {
        const left = await pacer.acquire([address]);
        times.push(clock.now());
        all.push(clock.now());
        left();
      }
    };
    await Promise.all([
      ...Array.from({ length: 4 }, () => sender('Ann@GMAIL.com', byDomain.gmail, 15)),
      ...Array.from({ length: 4 }, () => sender('bob@example.org', byDomain.other, 85)),
    ].map((f) => f()));
    assert.ok(busiestWindow(byDomain.gmail) <= 5, `gmail busiest second ${busiestWindow(byDomain.gmail)}`);
    assert.ok(busiestWindow(all) <= 20, `overall busiest second ${busiestWindow(all)}`);
    assert.ok(rateOf(all) >= 0.9 * 20, `overall ${rateOf(all)}/s: a waiting gmail.com message holds nobody else back`);
    // gmail.com books the first shared turn after its own: up to one shared interval (53 ms) late
    // each time, 266 ms apart at worst (here every time: the made-up clock keeps both in step)
    assert.ok(rateOf(byDomain.gmail) >= 0.7 * 5, `gmail.com ${rateOf(byDomain.gmail)}/s: it is not starved by the domains that never wait`);
  });

  test('messages that arrive late (a new connection, a busy machine) never make a second hold more than the rate', async () => {
    const { clock, sleep } = fakeTime();
    const pacer = createPacer({ sendRate: 20, domainRates: { 'gmail.com': 5 } }, memory(), { clock, sleep })!;
    const arrivals: number[] = [];
    const gmail: number[] = [];
    let seed = 7;
    // deterministic "random" delays of 0-400 ms between a turn and the server's receipt
    const delay = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % 400;
    };
    let n = 0;
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        while (n < 400) {
          const to = n++ % 4 === 0 ? 'a@gmail.com' : 'b@example.org';
          const left = await pacer.acquire([to]);
          await sleep(delay());
          arrivals.push(clock.now());
          if (to.endsWith('gmail.com')) gmail.push(clock.now());
          left();
        }
      }),
    );
    assert.ok(busiestWindow(arrivals) <= 20, `busiest second ${busiestWindow(arrivals)}`);
    assert.ok(busiestWindow(gmail) <= 5, `gmail.com busiest second ${busiestWindow(gmail)}`);
    // a turn counts from when it is given until a second after its message arrived: 200 ms of mean
    // delay cost that much of each second's capacity (20 / 1.2 = 16.7 at most)
    assert.ok(rateOf(arrivals) >= 0.7 * 20, `overall ${rateOf(arrivals)}/s`);
  });

  test('a message to several domains waits for each; a domain without a rate counts only towards sendRate', async () => {
    const { clock, sleep } = fakeTime();
    const store = counting(memory());
    const pacer = createPacer({ sendRate: 0, domainRates: { 'gmail.com': 2, 'yahoo.com': 1 } }, store, { clock, sleep })!;
    (await pacer.acquire(['x@example.com']))();
    assert.equal(store.calls.length, 0, 'no rate applies: the store is not asked');
    (await pacer.acquire(['a@gmail.com', 'b@yahoo.com', 'c@gmail.com']))();
    assert.deepEqual(store.calls[0].map((r) => r.key), ['d:gmail.com', 'd:yahoo.com']);
    const t = clock.now();
    await pacer.acquire(['d@yahoo.com']);
    assert.ok(Math.abs(clock.now() - t - 1000) < 1, `waited ${clock.now() - t} ms for yahoo.com`);
  });

  test('fractional rates: 0.5 per second is one message every 2 s', async () => {
    const { clock, sleep } = fakeTime();
    const pacer = createPacer({ sendRate: 0.5, domainRates: {} }, memory(), { clock, sleep })!;
    (await pacer.acquire(['a@example.com']))();
    const t = clock.now();
    (await pacer.acquire(['a@example.com']))();
    assert.ok(Math.abs(clock.now() - t - 2000) < 1, `waited ${clock.now() - t} ms`);
  });

  test('senders in one process queue for their turn: the store is asked about once per turn, not once per waiting sender', async () => {
    const { clock, sleep } = fakeTime();
    const store = counting(memory());
    const pacer = createPacer({ sendRate: 10, domainRates: {} }, store, { clock, sleep })!;
    await Promise.all(Array.from({ length: 30 }, async () => (await pacer.acquire(['a@example.com']))()));
    // about two per turn (one told to wait, one given it), where each waiting sender asking would be hundreds
    assert.ok(store.calls.length <= 100, `${store.calls.length} store calls for 30 turns`);
  });

  test('a store error reaches the sender, and the queue goes on for the next one', async () => {
    const { clock, sleep } = fakeTime();
    let fail = true;
    const inner = memory();
    const store: PacingStore = { ...inner, take: (rules, now, id) => (fail ? Promise.reject(new Error('store down')) : inner.take(rules, now, id)) };
    const pacer = createPacer({ sendRate: 10, domainRates: {} }, store, { clock, sleep })!;
    await assert.rejects(pacer.acquire(['a@example.com']), /store down/);
    fail = false;
    await pacer.acquire(['a@example.com']);
  });
});
