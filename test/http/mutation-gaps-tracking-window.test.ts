import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ClickWindow, createClickWindow } from '../../src/core/click-window.ts';

/**
 * The store's memory of its own recent clicks, which link-burst detection reads instead of the
 * database: what it answers after pruning, after it starts over, and after out-of-order clicks.
 * test/core/click-window.test.ts reads the plain cases. The burst window is 2 s; slackMs 0 here.
 */
const links = (w: ClickWindow, sendId: number, since: number) => {
  const out = new Set<number>();
  w.linksSince(sendId, since, out);
  return [...out].sort((x, y) => x - y);
};

test('click window: a late click of a link does not move its latest time back', () => {
  const w = createClickWindow({ from: 0 });
  w.add(1, 0, 2000);
  w.add(1, 0, 1500);
  assert.deepEqual(links(w, 1, 1800), [0]);
});

test('click window: an out-of-order click does not make it forget that it dropped newer clicks when it starts over', () => {
  const w = createClickWindow({ from: 0, maxSends: 2 });
  w.add(1, 0, 5000);
  w.add(2, 0, 1000);
  w.add(3, 0, 1200); // a third send: it forgets everything, including the click at 5000
  assert.equal(w.sends, 0);
  assert.equal(w.covers(5000), false);
  assert.equal(w.covers(5001), true);
});

test('click window: it never covers a time before it was made, even after pruning nothing', () => {
  const w = createClickWindow({ from: 10_000, slackMs: 0 });
  w.add(1, 0, 10_000);
  assert.equal(w.covers(9_999), false);
  assert.equal(w.covers(10_000), true);
});

test('click window: pruning drops each send once all of its clicks are older than the window', () => {
  const w = createClickWindow({ from: 0, slackMs: 0 });
  w.add(1, 0, 0);
  w.add(1, 1, 100); // a send's second click: its entry finds the send gone already
  w.add(2, 0, 1000);
  w.add(3, 0, 2500); // cutoff 500: send 1 goes
  assert.deepEqual([w.sends, links(w, 1, 0), links(w, 2, 0)], [2, [], [0]]);
  w.add(4, 0, 4000); // cutoff 2000: send 2 goes
  assert.deepEqual([w.sends, links(w, 2, 0), links(w, 3, 0), links(w, 4, 0)], [2, [], [0], [0]]);
});

test('click window: a click exactly at the cutoff is kept, and its send pruned later', () => {
  const w = createClickWindow({ from: 0, slackMs: 0 });
  w.add(2, 0, 100);
  w.add(2, 1, 500);
  w.add(1, 0, 500);
  w.add(9, 0, 2500); // cutoff 500
  assert.deepEqual(links(w, 2, 0), [1], 'link 0 (100) goes, link 1 (500) stays');
  assert.deepEqual(links(w, 1, 500), [0]);
  assert.equal(w.covers(500), true);
  w.add(10, 0, 5000); // cutoff 3000: every earlier send goes
  assert.deepEqual([w.sends, links(w, 1, 0), links(w, 2, 0)], [1, [], []]);
});

test('click window: after it starts over, pruning goes on as before', () => {
  const w = createClickWindow({ from: 0, slackMs: 0, maxSends: 2 });
  w.add(1, 0, 100);
  w.add(2, 0, 100);
  w.add(3, 0, 120); // starts over, covering from 121
  w.add(5, 0, 200);
  w.add(6, 0, 2300); // cutoff 300: send 5 goes
  assert.deepEqual([w.sends, links(w, 5, 0), links(w, 6, 0)], [1, [], [0]]);
});

test('click window: a long stream of clicks holds only the sends of the last 2 s, through its compactions', () => {
  const w = createClickWindow({ from: 0, slackMs: 0, maxSends: 1_000_000 });
  // one click a millisecond, each of its own send; the queue is compacted once 4,096 entries are behind it
  for (let i = 1; i <= 20_000; i++) w.add(i, i % 7, i);
  assert.equal(w.sends, 2001, 'sends 18,000 to 20,000');
  assert.deepEqual(links(w, 17_999, 0), []);
  assert.deepEqual(links(w, 18_000, 0), [18_000 % 7]);
  assert.equal(w.covers(18_000), true);
  assert.equal(w.covers(17_999), false);
});
