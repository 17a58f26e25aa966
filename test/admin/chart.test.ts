import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fmtTime, lineChart, niceCeil } from '../../src/http/admin/chart.ts';

const T0 = Date.UTC(2026, 0, 1, 9, 0);
const HOUR = 3_600_000;

test('niceCeil rounds the y axis up to 1, 2 or 5 times a power of ten', () => {
  assert.deepEqual([0, 1, 3, 7, 10, 11, 49, 51, 999].map(niceCeil), [1, 1, 5, 10, 10, 20, 50, 100, 1000]);
});

test('the chart is plain SVG with escaped text, one polyline per series, labels inside the frame', () => {
  const svg = lineChart({
    title: 'Opens <script>alert(1)</script> & "clicks"',
    times: [0, 1, 2, 3].map((i) => new Date(T0 + i * HOUR)),
    bucketMs: HOUR,
    series: [
      { label: 'Opens', color: '#2563eb', values: [3, 0, 7, 1] },
      { label: '<b>x</b>', color: '"red" onload="x"', dashed: true, values: [1, 0, 2, 0] },
    ],
  });
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*role="img"/);
  assert.doesNotMatch(svg, /<script|<b>|onload="/);
  assert.match(svg, /Opens &lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;clicks&quot;/);
  assert.equal((svg.match(/<polyline /g) ?? []).length, 2);
  assert.match(svg, /stroke-dasharray="5 4"/);
  assert.match(svg, />10<\/text>/, 'y axis tops at the nice ceiling of 7');
  assert.match(svg, /text-anchor="start"[^>]*>01-01 09:00</);
  assert.match(svg, /text-anchor="end"[^>]*>01-01 12:00</);
});

test('no data and a single bucket still draw', () => {
  assert.match(lineChart({ title: 't', times: [], bucketMs: HOUR, series: [{ label: 'a', color: '#000', values: [] }] }), /No opens or clicks yet/);
  const one = lineChart({ title: 't', times: [new Date(T0)], bucketMs: HOUR, series: [{ label: 'a', color: '#000', values: [4] }] });
  assert.match(one, /<circle /);
  assert.doesNotMatch(one, /NaN/);
  assert.equal(fmtTime(new Date(T0), 86_400_000), '2026-01-01');
});

test('a chart drawn at a phone width wraps its legend onto rows inside the frame and moves the plot below it', () => {
  const series = ['Opens', 'Human opens', 'Clicks', 'Human clicks'].map((label) => ({ label, color: '#000', values: [1, 3] }));
  const svg = lineChart({ title: 't', times: [new Date(T0), new Date(T0 + HOUR)], bucketMs: HOUR, series, width: 360, height: 300 });
  const legend = [...svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)" font-size="12"/g)].map((m) => [Number(m[1]), Number(m[2])]);
  assert.deepEqual(legend.map(([, y]) => y), [16, 16, 34, 34], 'two per row');
  assert.ok(legend.every(([x]) => x + 60 < 360), 'every legend entry starts well inside the 360 units');
  const top = Math.min(...[...svg.matchAll(/<line x1="48" x2="344" y1="([\d.]+)"/g)].map((m) => Number(m[1])));
  assert.ok(top >= 34 + 8, `the plot (top grid line at ${top}) starts below the second legend row`);
});
