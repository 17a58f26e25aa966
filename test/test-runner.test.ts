import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { orderBySlowest, TIMINGS_FILE, testFiles } from '../scripts/test-files.mjs';
import { runnerProject } from './helpers/runner-project.ts';

const ROOT = resolve(import.meta.dirname, '..');

describe('test file order', () => {
  test('slowest first; a file with no timing counts as the median known one; equal costs keep name order', () => {
    const timings = { 'a.test.ts': 1, 'b.test.ts': 30, 'c.test.ts': 5, 'd.test.ts': 5, 'gone.test.ts': 99 };
    assert.deepEqual(orderBySlowest(['a.test.ts', 'b.test.ts', 'c.test.ts', 'd.test.ts', 'new.test.ts'], timings), ['b.test.ts', 'c.test.ts', 'd.test.ts', 'new.test.ts', 'a.test.ts']);
    assert.deepEqual(orderBySlowest(['z.test.ts', 'y.test.ts'], {}), ['z.test.ts', 'y.test.ts'], 'no timings at all: the order given');
  });

  test('the committed timings name every test file, so a fresh clone orders them all', () => {
    const timings = JSON.parse(readFileSync(join(ROOT, TIMINGS_FILE), 'utf8')) as Record<string, number>;
    const missing = testFiles([join(ROOT, 'test')])
      .map((f) => f.slice(ROOT.length + 1))
      .filter((f) => typeof timings[f] !== 'number');
    // a few new files from concurrent work are fine (they count as typical); a stale file is not
    assert.ok(missing.length < 20, `files without a timing: ${missing.join(', ')}`);
  });
});

/** scripts/test.mjs in a throwaway project of its own (test/helpers/runner-project.ts) */
describe('scripts/test.mjs', () => {
  const { dir, project, run, remove } = runnerProject();
  after(remove);
  writeFileSync(join(dir, 'test/slow.test.ts'), "import { test } from 'node:test';\nconst n: number = 1;\ntest('slow', () => { console.log('ran slow', n); });\n");
  writeFileSync(join(dir, 'test/fast.test.ts'), "import { test } from 'node:test';\ntest('fast', () => {});\n");
  // a file that starts two processes, one of which spins for half a second of CPU
  writeFileSync(
    join(dir, 'test/spawns.test.ts'),
    [
      "import { execFile } from 'node:child_process';",
      "import { test } from 'node:test';",
      "import { promisify } from 'node:util';",
      "test('spawns', async () => {",
      "  await promisify(execFile)(process.execPath, ['-e', 'while (process.cpuUsage().user < 500000);']);",
      "  await promisify(execFile)(process.execPath, ['-e', '']);",
      '});',
    ].join('\n'),
  );
  writeFileSync(join(dir, TIMINGS_FILE), JSON.stringify({ 'test/fast.test.ts': 1, 'test/slow.test.ts': 9 }));

  test('passing tests and checks: exit 0, TypeScript files run, the slowest file first, the checks reported after', async () => {
    project('echo types fine');
    // one at a time, so the order they started in is the order reported
    const r = await run('--checks', '--test-reporter=tap', '--test-concurrency=1');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.indexOf('# Subtest: slow') < r.stdout.indexOf('# Subtest: fast'), r.stdout);
    assert.match(r.stdout, /^# pass 3$/m);
    assert.match(r.stderr, /slowest files \(wall s\): test\/\w+\.test\.ts [\d.]+(, test\/\w+\.test\.ts [\d.]+){2}\n/);
    assert.match(r.stderr, /typecheck: ok in \d+ s\n\nlint: ok in \d+ s/);
  });

  test("CPU beside wall time: each file counts its own and its child processes' CPU and the processes it started", async () => {
    project('true');
    const report = join(dir, 'cpu.json');
    const r = await run('--test-reporter=dot', `--cpu-report=${report}`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /CPU of the slowest \(their own and their child processes'\): .*test\/spawns\.test\.ts [\d.]+ s, 2 processes/);
    // without --test-concurrency: three files per core, at most eight
    assert.match(r.stderr, new RegExp(`3 files in \\d+ s, ${Math.min(8, 3 * availableParallelism())} at a time: \\d+ s of file wall time, \\d+ s of CPU`));
    const files = JSON.parse(readFileSync(report, 'utf8')) as Record<string, { wall: number; cpu: number; processes: number }>;
    assert.deepEqual(Object.keys(files).sort(), ['test/fast.test.ts', 'test/slow.test.ts', 'test/spawns.test.ts']);
    assert.equal(files['test/spawns.test.ts'].processes, 2);
    assert.equal(files['test/fast.test.ts'].processes, 0);
    // the spinning child's half second is counted (CPU time, so a loaded machine does not change it much)
    assert.ok(files['test/spawns.test.ts'].cpu >= files['test/fast.test.ts'].cpu + 0.4, JSON.stringify(files));
  });

  test('a failing check fails the run with its output, though every test passed', async () => {
    project('echo src/x.ts: error TS2322 && exit 2');
    const r = await run('--checks', '--test-reporter=dot');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /typecheck: FAILED \(exit 2\) in \d+ s\nsrc\/x\.ts: error TS2322/);
  });

  test('each file runs built to JavaScript, as from its own place: import.meta names the source, a failure its source line; a file that does not build fails the run', async () => {
    project('true');
    writeFileSync(join(dir, 'test/beside.txt'), 'beside');
    writeFileSync(
      join(dir, 'test/here.test.ts'),
      [
        "import assert from 'node:assert/strict';",
        "import { readFileSync } from 'node:fs';",
        "import { test } from 'node:test';",
        "test('here', () => {",
        "  assert.equal(readFileSync(new URL('./beside.txt', import.meta.url), 'utf8'), 'beside');",
        "  assert.equal(import.meta.filename, `${import.meta.dirname}/here.test.ts`);",
        "  const line: number = 7; throw new Error(`thrown at line ${line}`);",
        '});',
      ].join('\n'),
    );
    const r = await run('--test-reporter=tap', 'test/here.test.ts');
    rmSync(join(dir, 'test/here.test.ts'));
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /thrown at line 7/, 'the first two assertions held');
    assert.match(r.stdout, /location: '\S*\/test\/here\.test\.ts:4:1'/, 'the test is reported at its source line');
    assert.match(r.stdout, /test\/here\.test\.ts:7:\d+/, 'the stack names the source line');

    writeFileSync(join(dir, 'test/typo.test.ts'), "import { test } from 'node:test';\ntest('typo', () => { const = 1; });\n");
    const typo = await run('--test-reporter=dot', 'test/typo.test.ts');
    rmSync(join(dir, 'test/typo.test.ts'));
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /the test files did not build[\s\S]*typo\.test\.ts:2/);
  });

  test('a package bundled into the build works, and a failure in a callback it calls still names the source line', async () => {
    project('true');
    writeFileSync(
      join(dir, 'test/pkg.test.ts'),
      [
        "import assert from 'node:assert/strict';",
        "import { test } from 'node:test';",
        "import { z } from 'zod';",
        "test('pkg', () => {",
        "  assert.equal(z.string().parse('ok'), 'ok');",
        "  z.string().refine(() => { const line: number = 6; throw new Error(`thrown at line ${line}`); }).parse('x');",
        '});',
      ].join('\n'),
    );
    const r = await run('--test-reporter=tap', 'test/pkg.test.ts');
    rmSync(join(dir, 'test/pkg.test.ts'));
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /thrown at line 6/, 'the package ran');
    assert.match(r.stdout, /test\/pkg\.test\.ts:6:\d+/, 'the stack names the source line');
  });

  test('a failing test fails the run; --record-timings writes the wall times; an unknown option is refused', async () => {
    project('true');
    writeFileSync(join(dir, 'test/broken.test.ts'), "import { test } from 'node:test';\ntest('broken', () => { throw new Error('no'); });\n");
    // the built files of a run that was killed (its process gone: above any pid Linux hands out)
    mkdirSync(join(dir, '.test-build/tests-99999999/test'), { recursive: true });
    const r = await run('--record-timings', '--test-reporter=dot');
    assert.deepEqual(readdirSync(join(dir, '.test-build')), [], "the killed run's built files and this run's are gone");
    rmSync(join(dir, 'test/broken.test.ts'));
    assert.equal(r.code, 1, r.stdout);
    const timings = JSON.parse(readFileSync(join(dir, TIMINGS_FILE), 'utf8'));
    assert.deepEqual(Object.keys(timings), ['test/broken.test.ts', 'test/fast.test.ts', 'test/slow.test.ts', 'test/spawns.test.ts']);
    assert.ok(Object.values(timings).every((s) => typeof s === 'number' && s >= 0));

    const bad = await run('--test-only');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown option --test-only/);
  });
});
