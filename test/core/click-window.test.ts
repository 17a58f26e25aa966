import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createClickWindow } from '../../src/core/click-window.ts';
import { BURST_WINDOW_MS } from '../../src/core/engagement.ts';

const links = (w: ReturnType<typeof createClickWindow>, sendId: number, since: number) => {
  const out = new Set<number>();
  w.linksSince(sendId, since, out);
  return [...out].sort((x, y) => x - y);
};

test('click window: the links of a send clicked since a time, per send', () => {
  const w = createClickWindow({ from: 1000 });
  w.add(1, 0, 1000);
  w.add(1, 1, 1500);
  w.add(2, 2, 1500);
  w.add(1, 1, 1600);
  assert.deepEqual(links(w, 1, 1000), [0, 1]);
  assert.deepEqual(links(w, 1, 1100), [1], 'link 0 was clicked before');
  assert.deepEqual(links(w, 1, 1550), [1], 'the latest click of a link counts');
  assert.deepEqual(links(w, 2, 0), [2]);
  assert.deepEqual(links(w, 3, 0), []);
});

test('click window: covers nothing before it was made, nor what it has dropped', () => {
  const w = createClickWindow({ from: 10_000, slackMs: 1000 });
  assert.equal(w.covers(9_999), false, 'clicks stored before it was made are unknown to it');
  assert.equal(w.covers(10_000), true);
  w.add(1, 0, 10_000);
  w.add(2, 0, 10_500);
  w.add(3, 0, 10_000 + BURST_WINDOW_MS + 1000 + 300);
  // the newest click is 300 ms past the first one's window and slack: older clicks go, and so does cover for their time
  assert.equal(w.covers(10_500), true);
  assert.equal(w.covers(10_000), false);
  assert.deepEqual(links(w, 1, 0), [], 'dropped');
  assert.deepEqual(links(w, 2, 0), [0], 'still inside the window and slack');
  assert.equal(w.sends, 2);
  w.add(4, 1, 9_000);
  assert.deepEqual(links(w, 4, 0), [], 'a click older than what it covers is not taken');
});

test('click window: past its bound it forgets everything and covers only what comes after', () => {
  const w = createClickWindow({ from: 0, maxSends: 3 });
  for (const id of [1, 2, 3]) w.add(id, 0, 100);
  w.add(4, 0, 120);
  assert.equal(w.sends, 0);
  assert.equal(w.covers(120), false, 'the click that did not fit is not held');
  assert.equal(w.covers(121), true);
  w.add(5, 1, 200);
  assert.deepEqual(links(w, 5, 0), [1]);
});

test('click window: a link clicked thousands of times holds one entry', () => {
  const w = createClickWindow({ from: 0, slackMs: 0 });
  for (let i = 0; i < 50_000; i++) w.add(7, 3, i);
  assert.deepEqual(links(w, 7, 49_999), [3]);
  assert.equal(w.covers(49_999 - BURST_WINDOW_MS), true);
  assert.equal(w.sends, 1);
});
