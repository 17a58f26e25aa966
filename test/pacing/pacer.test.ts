import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import type { PaceRule } from '../../src/core/pacer.ts';
import { createPacer, HEADROOM, type PacingStore, pacingStores } from '../../src/pacing/index.ts';

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

/** The most grants in any window of `windowMs` (sliding, half-open). */
function busiestWindow(times: number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

const memory = () => pacingStores.create('memory', { store: undefined as never, log: undefined as never });

/** A store that counts the calls it gets. */
function counting(store: PacingStore): PacingStore & { calls: PaceRule[][] } {
  const calls: PaceRule[][] = [];
  const take: PacingStore['take'] = (rules, now) => {
    calls.push([...rules]);
    return store.take(rules, now);
  };
  return { ...store, calls, take };
}

describe('pacer', () => {
  test('sendRate 0 and no domain rates: no pacer at all (the delivery loop does no pacing work)', () => {
    const { clock } = fakeTime();
    assert.equal(createPacer({ sendRate: 0, domainRates: {} }, memory(), { clock }), undefined);
  });

  test('sendRate 20: 200 messages from 8 concurrent senders, never more than 20 in any second, at the rate less the headroom', async () => {
    const { clock, sleep } = fakeTime();
    const pacer = createPacer({ sendRate: 20, domainRates: {} }, memory(), { clock, sleep })!;
    const start = clock.now();
    const grants: number[] = [];
    let left = 200;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (left-- > 0) {
          await pacer.acquire(['someone@example.com']);
          grants.push(clock.now());
        }
      }),
    );
    assert.equal(grants.length, 200);
    assert.ok(busiestWindow(grants) <= 20, `busiest second: ${busiestWindow(grants)}`);
    const rate = (grants.length - 1) / ((clock.now() - start) / 1000);
    assert.ok(Math.abs(rate - 20 * HEADROOM) < 0.1, `rate ${rate}`);
  });

  test('domainRates: gmail.com at 5 while other domains use the rest of sendRate 20', async () => {
    const { clock, sleep } = fakeTime();
    const pacer = createPacer({ sendRate: 20, domainRates: { 'gmail.com': 5 } }, memory(), { clock, sleep })!;
    const byDomain: Record<string, number[]> = { gmail: [], other: [] };
    const all: number[] = [];
    const sender = (address: string, times: number[], n: number) => async () => {
      for (let i = 0; i < n; i++) {
        await pacer.acquire([address]);
        times.push(clock.now());
        all.push(clock.now());
      }
    };
    await Promise.all([
      ...Array.from({ length: 4 }, () => sender('Ann@GMAIL.com', byDomain.gmail, 15)),
      ...Array.from({ length: 4 }, () => sender('bob@example.org', byDomain.other, 85)),
    ].map((f) => f()));
    assert.ok(busiestWindow(byDomain.gmail) <= 5, `gmail busiest second ${busiestWindow(byDomain.gmail)}`);
    assert.ok(busiestWindow(all) <= 20, `overall busiest second ${busiestWindow(all)}`);
    const rate = (times: number[]) => (times.length - 1) / ((Math.max(...times) - Math.min(...times)) / 1000);
    assert.ok(rate(all) >= 0.9 * 20, `overall ${rate(all)}/s: a waiting gmail.com message holds nobody else back`);
    // gmail.com books the first shared turn after its own: up to one shared interval (53 ms) late
    // each time, 266 ms apart at worst (here every time: the made-up clock keeps both in step)
    assert.ok(rate(byDomain.gmail) >= 0.7 * 5, `gmail.com ${rate(byDomain.gmail)}/s: it is not starved by the domains that never wait`);
  });

  test('a message to several domains waits for each; a domain without a rate counts only towards sendRate', async () => {
    const { clock, sleep } = fakeTime();
    const store = counting(memory());
    const pacer = createPacer({ sendRate: 0, domainRates: { 'gmail.com': 2, 'yahoo.com': 1 } }, store, { clock, sleep })!;
    await pacer.acquire(['x@example.com']);
    assert.equal(store.calls.length, 0, 'no rate applies: the store is not asked');
    await pacer.acquire(['a@gmail.com', 'b@yahoo.com', 'c@gmail.com']);
    assert.deepEqual(store.calls[0].map((r) => r.key), ['d:gmail.com', 'd:yahoo.com']);
    const t = clock.now();
    await pacer.acquire(['d@yahoo.com']);
    assert.ok(Math.abs(clock.now() - t - 1000 / HEADROOM) < 1, `waited ${clock.now() - t} ms for yahoo.com`);
  });

  test('fractional rates: 0.5 per second is one message every 2 s', async () => {
    const { clock, sleep } = fakeTime();
    const pacer = createPacer({ sendRate: 0.5, domainRates: {} }, memory(), { clock, sleep })!;
    await pacer.acquire(['a@example.com']);
    const t = clock.now();
    await pacer.acquire(['a@example.com']);
    assert.ok(Math.abs(clock.now() - t - 2000 / HEADROOM) < 1, `waited ${clock.now() - t} ms`);
  });

  test('senders in one process queue for their turn: the store is asked about once per turn, not once per waiting sender', async () => {
    const { clock, sleep } = fakeTime();
    const store = counting(memory());
    const pacer = createPacer({ sendRate: 10, domainRates: {} }, store, { clock, sleep })!;
    await Promise.all(Array.from({ length: 30 }, () => pacer.acquire(['a@example.com'])));
    assert.ok(store.calls.length <= 60, `${store.calls.length} store calls for 30 turns`);
  });

  test('a store error reaches the sender, and the queue goes on for the next one', async () => {
    const { clock, sleep } = fakeTime();
    let fail = true;
    const inner = memory();
    const store: PacingStore = { ...inner, take: (rules, now) => (fail ? Promise.reject(new Error('store down')) : inner.take(rules, now)) };
    const pacer = createPacer({ sendRate: 10, domainRates: {} }, store, { clock, sleep })!;
    await assert.rejects(pacer.acquire(['a@example.com']), /store down/);
    fail = false;
    await pacer.acquire(['a@example.com']);
  });
});
