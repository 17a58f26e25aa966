// The process of scripts/mutation-fast.mjs that runs test bundles in itself: it loads the packages once and
// loads a bundle (the test file with the instrumented sources) again for each mutant, so a mutant costs the
// test's own work, not a node start and the import of every package (about 1.4 s of CPU a test file here).
// `node mutation-fast-worker.mjs <plan.json>`; results are appended to the plan's `out` file, one JSON a line.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { mock } from 'node:test';
import { newSuite } from './mutation-node-test-shim.mjs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ns = (globalThis.__stryker__ ??= {});
let stray = [];
// an error thrown outside any awaited test code (a callback, a timer) fails the run, as it fails a node:test file
process.on('uncaughtException', (e) => stray.push(e));
process.on('unhandledRejection', (e) => stray.push(e));

const message = (e) => String(e?.stack ?? e).split('\n').slice(0, 3).join(' | ');

async function call(fn, t) {
  if (fn.length >= 2) return new Promise((resolve, reject) => fn(t, (err) => (err ? reject(err) : resolve())));
  return fn(t);
}

function context(name) {
  const afters = [];
  const controller = new AbortController();
  return { t: { name, signal: controller.signal, mock, after: (fn) => afters.push(fn), diagnostic() {}, plan() {}, skip() {}, todo() {} }, afters, controller };
}

async function runTest(test, beforeEach, afterEach, failures) {
  // a mutant run stops at the first failure (one is the verdict); the after hooks still run to clean up
  if (test.skip || (plan.mode === 'mutants' && failures.length > 0)) return;
  const { t, afters, controller } = context(test.name);
  try {
    for (const h of beforeEach) await call(h, t);
    await call(test.fn, t);
  } catch (e) {
    failures.push(`${test.name}: ${message(e)}`);
  }
  // node:test's order: the parents' afterEach hooks, then the test's own t.after callbacks
  for (const fn of [...afterEach, ...afters]) {
    try {
      await call(fn, t);
    } catch (e) {
      failures.push(`${test.name} (after): ${message(e)}`);
    }
  }
  controller.abort();
}

async function runSuite(suite, inherited, failures) {
  if (suite.skip) return;
  const beforeEach = [...inherited.beforeEach, ...suite.beforeEach];
  const afterEach = [...suite.afterEach, ...inherited.afterEach];
  const { t } = context(suite.name);
  let ready = true;
  try {
    for (const h of suite.before) await call(h, t);
  } catch (e) {
    failures.push(`${suite.name} (before): ${message(e)}`);
    ready = false;
  }
  for (const child of ready ? suite.children : []) {
    if (child.kind === 'suite') await runSuite(child, { beforeEach, afterEach }, failures);
    else await runTest(child, beforeEach, afterEach, failures);
  }
  for (const h of suite.after) {
    try {
      await call(h, t);
    } catch (e) {
      failures.push(`${suite.name} (after): ${message(e)}`);
    }
  }
}

/** Loads the file's bundle afresh (a new module instance: module-level code runs again) and runs its tests. */
async function runFile(file, key, budgetMs) {
  const root = newSuite('<root>');
  globalThis.__mutationCollector = { current: root };
  stray = [];
  const failures = [];
  const started = Date.now();
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), budgetMs);
  });
  const work = (async () => {
    await import(`${pathToFileURL(plan.bundles[file]).href}?run=${key}`);
    await runSuite(root, { beforeEach: [], afterEach: [] }, failures);
  })().catch((e) => failures.push(`load: ${message(e)}`));
  const outcome = await Promise.race([work.then(() => 'done'), timeout]);
  clearTimeout(timer);
  // errors thrown a little after the last test (a server closing) still belong to this run
  await new Promise((resolve) => setTimeout(resolve, 20));
  failures.push(...stray.map((e) => `uncaught: ${message(e)}`));
  const hitLimit = failures.some((f) => f.includes('Hit count limit reached'));
  return { ms: Date.now() - started, timedOut: outcome === 'timeout' || hitLimit, failures };
}

async function dryRun() {
  const files = {};
  for (const file of plan.files) {
    ns.currentTestId = file;
    const r = await runFile(file, 'dry', plan.dryBudgetMs);
    files[file] = { ms: r.ms, failures: r.failures, timedOut: r.timedOut };
  }
  ns.currentTestId = undefined;
  const cpu = process.cpuUsage();
  writeFileSync(plan.out, JSON.stringify({ files, coverage: ns.mutantCoverage ?? { static: {}, perTest: {} }, cpuMs: (cpu.user + cpu.system) / 1000 }));
}

async function mutantRuns() {
  let done = 0;
  for (const job of plan.jobs) {
    const cpu0 = process.cpuUsage();
    ns.activeMutant = job.id;
    ns.hitCount = 0;
    ns.hitLimit = job.hitLimit;
    let verdict = { id: job.id, status: 'Survived', tests: job.files.length };
    for (const [i, file] of job.files.entries()) {
      const r = await runFile(file, `m${job.id}`, plan.budgetMs[file]);
      if (r.timedOut || r.failures.length) {
        verdict = { id: job.id, status: r.timedOut ? 'Timeout' : 'Killed', killedBy: file, reason: r.failures[0] ?? 'timeout', tests: i + 1 };
        break;
      }
    }
    ns.activeMutant = undefined;
    ns.hitCount = undefined;
    const cpu = process.cpuUsage(cpu0);
    appendFileSync(plan.out, `${JSON.stringify({ ...verdict, cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
    // a timed-out run may still be going on: a fresh process for the next mutant; and a bounded heap
    if (verdict.status === 'Timeout' || ++done >= plan.perProcess) process.exit(0);
  }
  process.exit(0);
}

await (plan.mode === 'dry' ? dryRun() : mutantRuns());
