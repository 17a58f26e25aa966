import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Logger } from 'pino';
import { createEvents } from '../../src/core/events.ts';
import { createTrackingRecorder, type TrackedEvent } from '../../src/core/tracking-recorder.ts';
import type { Store } from '../../src/store/contract.ts';

/**
 * The group-commit recorder behind the open pixel and click redirect, as its operator sees it: what
 * reaches the database and when, its counters, and the lines it logs when events are dropped, lost
 * or held for a retry. The store is scripted; the real store's batches are read in test/core/tracking*.
 */
const event = (token: string): TrackedEvent => ({ type: 'open', token, at: 1, link_index: null, metadata: {}, method: 'GET', userAgent: 'Mozilla/5.0 (X11) Firefox/126' });

interface Line {
  level: 'error' | 'warn';
  obj: Record<string, unknown>;
  msg: string;
}

function capturingLog(): { log: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: Line['level']) => (obj: Record<string, unknown>, msg: string) => lines.push({ level, obj, msg });
  return { log: { error: at('error'), warn: at('warn'), info: () => {}, debug: () => {} } as unknown as Logger, lines };
}

type Outcome = 'ok' | 'down' | 'bad';

/** applyBatch takes the next outcome ('ok' once they run out), after `delayMs`; 'down' is a lost connection */
function scriptedStore(outcomes: Outcome[], opts: { delayMs?: number; pruneFails?: boolean } = {}) {
  const attempts: { at: number; size: number; outcome: Outcome }[] = [];
  const prunes: number[] = [];
  const store = {
    dialect: { isConnectionError: (e: unknown) => (e as Error).message === 'down' },
    tracking: {
      async applyBatch(events: TrackedEvent[]) {
        const outcome = outcomes.shift() ?? 'ok';
        attempts.push({ at: performance.now(), size: events.length, outcome });
        if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
        if (outcome !== 'ok') throw new Error(outcome);
        return { inserted: events.length, unknown: 0, firstOpens: 0, firstClicks: 0 };
      },
      async pruneBatches(before: number) {
        prunes.push(before);
        if (opts.pruneFails) throw new Error('prune refused');
        return 0;
      },
    },
  } as unknown as Store;
  return { store, attempts, prunes };
}

async function until(what: string, done: () => boolean, ms = 3000): Promise<void> {
  const end = performance.now() + ms;
  while (!done()) {
    if (performance.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const DAY = 86_400_000;

test('recorder: events dropped after close are logged on the first and on every 10,000th, with the count', async () => {
  const { store } = scriptedStore([]);
  const { log, lines } = capturingLog();
  const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000 });
  await rec.close();
  for (let i = 0; i < 10_001; i++) rec.record(event(`t${i}`));
  assert.equal(rec.stats.dropped, 10_001);
  assert.deepEqual(lines, [
    { level: 'error', obj: { dropped: 1, closed: true }, msg: 'tracking events dropped' },
    { level: 'error', obj: { dropped: 10_000, closed: true }, msg: 'tracking events dropped' },
  ]);
});

test('recorder: a full batch is written at once, not when the interval ends', async () => {
  const { store, attempts } = scriptedStore([]);
  const rec = createTrackingRecorder({ store, log: capturingLog().log }, { maxBatch: 2, intervalMs: 60_000 });
  rec.record(event('a'));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(attempts.length, 0, 'one event of a batch of two waits for the interval');
  rec.record(event('b'));
  await until('the full batch written', () => rec.stats.written === 2, 1000);
  assert.deepEqual(
    attempts.map((a) => a.size),
    [2],
  );
  await rec.close();
});

test('recorder: flush() and close() wait for a write already under way', async () => {
  const { store } = scriptedStore([], { delayMs: 30 });
  const rec = createTrackingRecorder({ store, log: capturingLog().log }, { maxBatch: 2, intervalMs: 60_000 });
  rec.record(event('a'));
  rec.record(event('b')); // a full batch: its write starts now
  await rec.flush();
  assert.deepEqual(rec.stats, { buffered: 0, written: 2, dropped: 0 });
  rec.record(event('c'));
  rec.record(event('d'));
  await rec.close();
  assert.deepEqual(rec.stats, { buffered: 0, written: 4, dropped: 0 });
});

test('recorder: a close whose writes fail counts every event not written as lost, once, and says how many', async () => {
  const { store } = scriptedStore(['bad', 'bad', 'bad']);
  const { log, lines } = capturingLog();
  const rec = createTrackingRecorder({ store, log }, { maxBatch: 2, intervalMs: 60_000 });
  rec.record(event('x'));
  await assert.rejects(rec.flush(), /bad/);
  assert.equal(rec.stats.dropped, 1, 'dropped before the close');
  for (const t of ['a', 'b', 'c', 'd', 'e']) rec.record(event(t)); // a, b: a write under way; c, d, e buffered
  await rec.close();
  assert.deepEqual(rec.stats, { buffered: 0, written: 0, dropped: 6 });
  const lost = lines.filter((l) => l.msg === 'tracking events lost on close');
  assert.deepEqual(
    lost.map((l) => [l.level, l.obj]),
    [['error', { lost: 5 }]],
  );
});

test('recorder: a clean close logs no loss', async () => {
  const { store } = scriptedStore([]);
  const { log, lines } = capturingLog();
  const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000 });
  rec.record(event('a'));
  await rec.close();
  assert.equal(rec.stats.written, 1);
  assert.deepEqual(lines, []);
});

test('recorder: a batch refused for a lost connection is retried on its own, backing off, and says so', async () => {
  const { store, attempts } = scriptedStore(['down', 'down', 'ok']);
  const { log, lines } = capturingLog();
  const rec = createTrackingRecorder({ store, log }, { intervalMs: 20 });
  rec.record(event('a'));
  // 20 ms, then 40 ms after the first failure, 80 ms after the second: written well within 3 s (the backoff's cap is 5 s)
  await until('written after two failures', () => rec.stats.written === 1);
  assert.deepEqual(
    attempts.map((a) => a.outcome),
    ['down', 'down', 'ok'],
  );
  // timers never fire early (1 ms of rounding aside); under load they fire late
  assert.ok(attempts[1].at - attempts[0].at >= 35, `first retry after ${attempts[1].at - attempts[0].at} ms`);
  assert.ok(attempts[2].at - attempts[1].at >= 75, `second retry after ${attempts[2].at - attempts[1].at} ms`);
  const warned = lines.filter((l) => l.level === 'warn');
  assert.deepEqual(
    warned.map((l) => [l.msg, l.obj.buffered, (l.obj.err as Error).message]),
    [
      ['tracking events not written yet (database unreachable); will retry', 1, 'down'],
      ['tracking events not written yet (database unreachable); will retry', 1, 'down'],
    ],
  );
  await rec.close();
});

test('recorder: old batch ids are pruned at most once an hour, a day back', async () => {
  const { store, prunes } = scriptedStore([]);
  let now = 10 * DAY;
  const rec = createTrackingRecorder({ store, log: capturingLog().log }, { intervalMs: 60_000, now: () => now });
  const write = async () => {
    rec.record(event('a'));
    await rec.flush();
  };
  await write();
  now += 3_599_999;
  await write();
  assert.deepEqual(prunes, [9 * DAY], 'not again within the hour');
  now += 1;
  await write();
  assert.deepEqual(prunes, [9 * DAY, 9 * DAY + 3_600_000], 'an hour after the last');
});

test('recorder: a prune that fails is only a warning; the batch counts as written', async () => {
  const { store } = scriptedStore([], { pruneFails: true });
  const { log, lines } = capturingLog();
  const rec = createTrackingRecorder({ store, log }, { intervalMs: 60_000 });
  rec.record(event('a'));
  await rec.flush();
  assert.equal(rec.stats.written, 1);
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg, (l.obj.err as Error).message]),
    [['warn', 'old tracking batch ids not pruned; will try again later', 'prune refused']],
  );
  await rec.close();
});

test('events: a listener that throws or rejects is reported, one that returns nothing or a value is not; off() stops it; has() follows', async () => {
  const reported: [string, string][] = [];
  const events = createEvents((err, event) => reported.push([event, (err as Error).message]));
  assert.equal(events.has('notify:contact.unsubscribed'), false);
  const seen: unknown[] = [];
  const offSync = events.on('notify:contact.unsubscribed', (p) => {
    seen.push(p);
  });
  const offAsync = events.on('notify:contact.unsubscribed', async () => {
    throw new Error('listener broke');
  });
  // a plain function may return anything; only a promise's rejection is a failure
  const offValue = events.on('notify:contact.unsubscribed', (() => 42) as () => void);
  const offThrow = events.on('notify:contact.unsubscribed', () => {
    throw new Error('listener threw');
  });
  assert.equal(events.has('notify:contact.unsubscribed'), true);
  events.emit('notify:contact.unsubscribed', { n: 1 } as never);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, [{ n: 1 }]);
  assert.deepEqual(reported, [
    ['notify:contact.unsubscribed', 'listener threw'],
    ['notify:contact.unsubscribed', 'listener broke'],
  ]);
  offSync();
  offAsync();
  offValue();
  offThrow();
  assert.equal(events.has('notify:contact.unsubscribed'), false);
  events.emit('notify:contact.unsubscribed', { n: 2 } as never);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, [{ n: 1 }], 'nothing after off()');
  assert.equal(reported.length, 2);
});
