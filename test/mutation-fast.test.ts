// The in-process mutation runner (scripts/mutation-fast.mjs) on a fixture small enough to know every verdict:
// the worker follows node:test's hook order, a check that notices a mutant kills it, one that cannot leaves it
// surviving, and a mutant that makes a loop endless is a timeout, not a hung run.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { reachOf, runJobs, worker } from '../scripts/mutation-fast-jobs.mjs';

// loaded at run time, not bundled by scripts/test-bundle.mjs: Stryker's instrumenter imports optional parsers
// (svelte) that are not installed
const BUILD = pathToFileURL(resolve('scripts/mutation-fast-build.mjs')).href;

const SRC = 'test/fixtures/mutation-fast/calc.ts';
const CHECK = 'test/fixtures/mutation-fast/calc.check.ts';

test('a fixture mutated: its checks kill, let survive or time out each mutant, in one worker process at a time', async () => {
  const work = mkdtempSync(join(tmpdir(), 'notify-mutation-fast-'));
  try {
    const { bundle, instrument } = await import(BUILD);
    const { instrumented, mutants } = await instrument([SRC]);
    const bundles = await bundle([CHECK], instrumented, join(work, 'bundles'));
    worker({ mode: 'dry', files: [CHECK], bundles, out: join(work, 'dry.json'), dryBudgetMs: 60_000, killAfterMs: 120_000 }, work);
    const dry = JSON.parse(readFileSync(join(work, 'dry.json'), 'utf8'));
    assert.deepEqual(dry.files[CHECK].failures, [], 'without a mutant the checks pass, hooks in node:test order');
    const reach = reachOf(dry.coverage.perTest, [CHECK]);
    const covered = mutants.filter((m: { id: string }) => reach(m.id).files.length > 0);
    assert.ok(covered.length >= 10, `the checks reach the mutants (${covered.length})`);
    const jobs = covered.map((m: { id: string }) => ({ id: m.id, files: [CHECK], only: reach(m.id).only, hitLimit: 10_000 }));
    const verdicts = runJobs({ jobs, bundles, budgetMs: { [CHECK]: 20_000 }, perProcess: 100, work });
    const find = (line: number, mutatorName: string, replacement: string) => {
      const m = covered.find((x: { location: { start: { line: number } }; mutatorName: string; replacement: string }) => x.location.start.line + 1 === line && x.mutatorName === mutatorName && x.replacement === replacement);
      assert.ok(m, `a ${mutatorName} mutant ${replacement} on line ${line}`);
      return { job: jobs.find((j: { id: string }) => j.id === m.id), verdict: verdicts.get(m.id) };
    };
    const status = (line: number, mutatorName: string, replacement: string) => find(line, mutatorName, replacement).verdict?.status;
    assert.equal(status(3, 'ConditionalExpression', 'false'), 'Killed', 'clamp(5, 3) would be 5');
    assert.equal(status(3, 'EqualityOperator', 'n >= max'), 'Survived', 'clamp(5, 3) cannot tell > from >=');
    assert.equal(status(8, 'EqualityOperator', 'n >= 0'), 'Killed', 'countdown(3) would be 4');
    assert.equal(status(9, 'UpdateOperator', 'n++'), 'Timeout', 'the loop never ends: the hit limit stops it');
    // the tests are numbered in file order, the skipped one too: clamp 0, countdown 1, collect 3, sum 4, double 5
    const doubled = find(23, 'ArithmeticOperator', 'n / 2');
    assert.deepEqual(doubled.job?.only, { [CHECK]: [5] }, 'only the test that reached it runs');
    assert.equal(doubled.verdict?.status, 'Killed');
    assert.equal(doubled.verdict?.wholeAgain, undefined, 'its failure stands: the selected test passes without the mutant');
    const empty = find(16, 'ConditionalExpression', 'false');
    assert.deepEqual(empty.job?.only, { [CHECK]: [4] });
    assert.equal(empty.verdict?.status, 'Survived', 'the sum test alone fails without any mutant: the whole file decides');
    assert.equal(empty.verdict?.wholeAgain, 1);
    assert.equal(status(3, 'ConditionalExpression', 'false'), 'Killed', 'clamp is the first test: its failure is the whole file\'s');
    assert.equal(verdicts.size, jobs.length, 'every mutant has a verdict');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
