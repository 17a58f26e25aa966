import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GuardResult } from '../../bench/lib/guard.ts';
import { formatLine, type Measurement, RESULT_LINE, verdict } from '../../bench/lib/report.ts';

const quiet: GuardResult = { busy: false, foreignCores: 0.01, text: 'load 0.05 -> 0.62, other processes 0.01 cores' };
const busy: GuardResult = { busy: true, foreignCores: 1.4, text: 'load 3.10 -> 3.40, other processes 1.40 cores' };

const open: Measurement = { name: 'pixel open with recording [sqlite]', value: 6100, unit: 'req/s', baselineName: 'bare node:http GIF', baseline: 10_000, target: { on: 'ratio', op: '>=', limit: 0.6 } };
const render: Measurement = { name: 'per-recipient render after compile', value: 12.5, unit: 'µs', baselineName: 'regex rewrite', baseline: 40, target: { on: 'value', op: '<=', limit: 10 } };
const drips: Measurement = { name: 'process-drips CPU per step [sqlite]', value: 700, unit: 'µs', baselineName: 'campaign CPU per message', baseline: 650, target: { on: 'ratio', op: '<=', limit: 1.1 } };

test('a result line reads value, baseline, ratio, target and verdict, and parses back', () => {
  const line = formatLine(open, quiet);
  assert.equal(line, 'pixel open with recording [sqlite]: 6,100 req/s (baseline bare node:http GIF 10,000 req/s, ratio 0.610, target >= 0.6) PASS  [load 0.05 -> 0.62, other processes 0.01 cores]');
  const m = RESULT_LINE.exec(line)!;
  assert.deepEqual([m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9]], ['pixel open with recording [sqlite]', '6,100', 'req/s', 'bare node:http GIF', '10,000', '0.610', '>=', '0.6', 'PASS']);
  const timed = RESULT_LINE.exec(formatLine(render, quiet))!;
  assert.deepEqual([timed[7], timed[8], timed[9]], ['<=', '10', 'FAIL']);
});

test('the verdict follows the target: on the ratio or on the value, either direction', () => {
  assert.equal(verdict(open, quiet), 'PASS');
  assert.equal(verdict({ ...open, value: 5900 }, quiet), 'FAIL');
  assert.equal(verdict({ ...open, value: 5900, ratio: 0.62 }, quiet), 'PASS', 'a median of per-round ratios decides over value / baseline');
  assert.equal(verdict(render, quiet), 'FAIL');
  assert.equal(verdict({ ...render, value: 9.9 }, quiet), 'PASS');
  assert.equal(verdict(drips, quiet), 'PASS');
  assert.equal(verdict({ ...drips, value: 720 }, quiet), 'FAIL');
  assert.equal(verdict({ ...render, value: 200, unit: 'MB', target: { on: 'value', op: '<', limit: 200 } }, quiet), 'FAIL');
});

test('on a busy machine every verdict is UNRELIABLE, whatever the figures', () => {
  for (const m of [open, render, drips, { ...open, value: 1 }]) assert.equal(verdict(m, busy), 'UNRELIABLE (machine busy)');
  assert.match(formatLine(open, busy), /target >= 0\.6\) UNRELIABLE \(machine busy\) {2}\[load 3\.10 -> 3\.40, other processes 1\.40 cores\]$/);
  assert.match(formatLine(open, busy), RESULT_LINE);
});
