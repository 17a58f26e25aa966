import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { compiled } from '../../bench/lib/compiled.ts';
import { summarise } from '../../bench/lib/profile.ts';

// a TypeScript file whose time goes to one named function, at a known line (5)
const SOURCE = `// spends its CPU time in hotLoop
type N = number;
const end = Date.now() + 400;

function hotLoop(n: N): N {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003;
  return x;
}

let s = 0;
while (Date.now() < end) s += hotLoop(20000);
console.log(s >= 0);
`;

test('a --cpu-prof profile of a compiled file summarises to self time per function at its source line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-profile-test-'));
  const source = join(dir, 'hot.ts');
  writeFileSync(source, SOURCE);
  const js = await compiled(pathToFileURL(source));
  try {
    execFileSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, js.file]);
    const [file] = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
    const summary = summarise(JSON.parse(readFileSync(join(dir, file), 'utf8')), 15);
    assert.ok(summary.top.length > 0 && summary.top.length <= 15);
    const [top] = summary.top;
    assert.equal(top.frame, `hotLoop ${source}:5`, `top frames: ${summary.top.map((f) => f.frame).join(', ')}`);
    assert.ok(top.share > 0.5, `hotLoop has ${top.share} of the busy samples`);
    assert.ok(top.ms > 150 && top.ms <= summary.busyMs, `hotLoop ${top.ms} ms of ${summary.busyMs} ms busy`);
    const shares = summary.top.reduce((n, f) => n + f.share, 0);
    assert.ok(shares <= 1.0001, `shares add up to ${shares}`);
  } finally {
    js.remove();
    rmSync(dir, { recursive: true, force: true });
  }
});
