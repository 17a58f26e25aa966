// The in-process mutation runner (scripts/mutation-fast.mjs) on a fixture small enough to know every verdict:
// the worker follows node:test's hook order, a check that notices a mutant kills it, one that cannot leaves it
// surviving, and a mutant that makes a loop endless is a timeout, not a hung run, even where the worker cannot
// stop it itself (its parent kills it at the file's budget).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { reachOf, readLines, runJobs, worker } from '../scripts/mutation-fast-jobs.mjs';

// loaded at run time, not bundled by scripts/test-bundle.mjs: Stryker's instrumenter imports optional parsers
// (svelte) that are not installed
const BUILD = pathToFileURL(resolve('scripts/mutation-fast-build.mjs')).href;

const SRC = 'test/fixtures/mutation-fast/calc.ts';
const CHECK = 'test/fixtures/mutation-fast/calc.check.ts';

type Mutant = { id: string; location: { start: { line: number } }; mutatorName: string; replacement: string };
type Job = { id: string; files: string[]; only: Record<string, number[]>; hitLimit: number };

/** The fixture `src` instrumented, `check` bundled with it and run once without a mutant: its mutants and coverage. */
async function prepare(work: string, src: string, check: string) {
  const { bundle, instrument } = await import(BUILD);
  const { instrumented, mutants } = await instrument([src]);
  const bundles = await bundle([check], instrumented, join(work, 'bundles'));
  worker({ mode: 'dry', files: [check], bundles, out: join(work, 'dry.json'), dryBudgetMs: 60_000, killAfterMs: 120_000 }, work);
  const dry = JSON.parse(readFileSync(join(work, 'dry.json'), 'utf8'));
  assert.deepEqual(dry.files[check].failures, [], 'without a mutant the checks pass');
  const reach = reachOf(dry.coverage.perTest, [check]);
  const covered: Mutant[] = mutants.filter((m: Mutant) => reach(m.id).files.length > 0);
  const jobs: Job[] = covered.map((m) => ({ id: m.id, files: [check], only: reach(m.id).only, hitLimit: 10_000 }));
  const find = (line: number, mutatorName: string, replacement: string) => {
    const m = covered.find((x) => x.location.start.line + 1 === line && x.mutatorName === mutatorName && x.replacement === replacement);
    assert.ok(m, `a ${mutatorName} mutant ${replacement} on line ${line}`);
    return jobs.find((j) => j.id === m.id) as Job;
  };
  return { bundles, covered, jobs, find };
}

test('a fixture mutated: its checks kill, let survive or time out each mutant, in one worker process at a time', async () => {
  const work = mkdtempSync(join(tmpdir(), 'notify-mutation-fast-'));
  try {
    const { bundles, covered, jobs, find: findJob } = await prepare(work, SRC, CHECK);
    assert.ok(covered.length >= 10, `the checks reach the mutants (${covered.length})`);
    const verdicts = await runJobs({ jobs, bundles, budgetMs: { [CHECK]: 20_000 }, perProcess: 100, work });
    const find = (line: number, mutatorName: string, replacement: string) => {
      const job = findJob(line, mutatorName, replacement);
      return { job, verdict: verdicts.get(job.id) };
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

const HANG_SRC = 'test/fixtures/mutation-fast/hang.ts';
const HANG_CHECK = 'test/fixtures/mutation-fast/hang.check.ts';

test('a mutant that hangs where the worker cannot stop it is killed at its file budget; a fresh worker judges the rest', async () => {
  const work = mkdtempSync(join(tmpdir(), 'notify-mutation-fast-'));
  try {
    const { bundles, jobs, find } = await prepare(work, HANG_SRC, HANG_CHECK);
    // `opts.maxBatch && 2`: an await loop that never yields, so the worker's own timer never fires;
    // `opts.perPage && 3`: a plain loop in code that is not instrumented, so the hit limit never trips
    const awaitLoop = find(10, 'LogicalOperator', 'opts.maxBatch && 2');
    const plainLoop = find(24, 'LogicalOperator', 'opts.perPage && 3');
    const countDown = find(17, 'UpdateOperator', 'batches--');
    // the hanging ones first, so that every other mutant is judged after them
    const ordered = [awaitLoop, plainLoop, ...jobs.filter((j) => j !== awaitLoop && j !== plainLoop)];
    const budgetMs = 3_000;
    const started = Date.now();
    const verdicts = await runJobs({ jobs: ordered, bundles, budgetMs: { [HANG_CHECK]: budgetMs }, perProcess: 100, work });
    const seconds = (Date.now() - started) / 1000;
    // each hang costs its budget and a little grace, not a batch's budgets; the bound leaves room for a loaded machine
    assert.ok(seconds < 30, `the run ended in ${seconds.toFixed(1)} s`);
    for (const hung of [awaitLoop, plainLoop]) {
      assert.equal(verdicts.get(hung.id)?.status, 'Timeout');
      assert.match(verdicts.get(hung.id)?.reason ?? '', /killed/);
    }
    assert.equal(verdicts.get(countDown.id)?.status, 'Killed', 'the mutants after the hangs are still judged');
    assert.equal(verdicts.size, jobs.length, 'every mutant has a verdict');
    // the verdicts file (what --resume goes on from) holds one verdict a mutant
    const results = join(work, 'results.jsonl');
    const lines = readFileSync(results, 'utf8').trim().split('\n');
    assert.deepEqual(lines.map((l) => JSON.parse(l).id).sort(), jobs.map((j) => j.id).sort());
    // a verdict cut short (a process killed while writing it) is no verdict: only that mutant runs again
    const last = JSON.parse(lines[lines.length - 1]);
    writeFileSync(results, `${lines.join('\n').slice(0, -10)}`);
    const again = await runJobs({ jobs: ordered, bundles, budgetMs: { [HANG_CHECK]: budgetMs }, perProcess: 100, work });
    assert.deepEqual([...again].map(([id, v]) => [id, v.status, v.reason]), [...verdicts].map(([id, v]) => [id, v.status, v.reason]));
    assert.equal(readLines(results).length, jobs.length, 'the others kept, not run again');
    assert.ok(readLines(results).some((v) => v.id === last.id));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
