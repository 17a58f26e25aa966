// Runs the test files under a folder in one node:test run, the slowest first, three per core at a time.
// Usage: node scripts/test.mjs [--checks] [--record-timings] [suffix=.test.ts] [dir or file...=test]
//          [--cpu-report=FILE] [--file-timeout=S] [--test-concurrency=N] [--test-reporter=spec|tap|dot|junit] [--test-reporter-destination=FILE]
//   --checks          runs `npm run typecheck` and `npm run lint` beside the tests; either failing fails the run
//   --record-timings  writes each file's wall time of this run into scripts/test-timings.json
//   --cpu-report=FILE writes each file's wall time, CPU time and processes started as JSON (Linux)
//   --file-timeout=S  fails a file still running after S seconds (default 600; 0: no limit) and stops it
//
// `node --test` sorts its files by name, so with two workers one long file that sorts last runs
// alone at the end. node:test's run() starts files in the order given: the files known to be slow
// (scripts/test-timings.json, committed, so a fresh clone has it) go first, the short ones fill the
// gaps at the end.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { bundleTests } from './test-bundle.mjs';
import { orderBySlowest, readTimings, testFiles, writeTimings } from './test-files.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// the test processes inherit the runner's execArgv: it runs with test-cpu.mjs, which reports each
// file's CPU time when its process exits, and with source maps, so that a failure in a built test file
// (test-bundle.mjs) names the line of its source
const CPU_PRELOAD = new URL('./test-cpu.mjs', import.meta.url).href;
if (!process.execArgv.includes('--enable-source-maps')) {
  const preload = existsSync(fileURLToPath(CPU_PRELOAD)) ? ['--import', CPU_PRELOAD] : [];
  const child = spawn(process.execPath, ['--enable-source-maps', ...preload, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  process.exitCode = await main(process.argv.slice(2));
}

async function main(argv) {
  const options = argv.filter((a) => a.startsWith('--'));
  const [suffix = '.test.ts', ...paths] = argv.filter((a) => !a.startsWith('--'));
  if (paths.length === 0) paths.push('test');
  const flag = (name) => options.find((o) => o.startsWith(`${name}=`))?.slice(name.length + 1);
  const known = ['--checks', '--record-timings', '--cpu-report', '--file-timeout', '--test-concurrency', '--test-reporter', '--test-reporter-destination'];
  const unknown = options.filter((o) => !known.includes(o.split('=')[0]));
  if (unknown.length > 0) {
    console.error(`scripts/test.mjs: unknown option ${unknown.join(' ')} (known: ${known.join(' ')})`);
    return 2;
  }

  // keys of the timings file: paths from the repository root, wherever the runner was started
  const files = testFiles(paths, suffix).map((f) => relative(ROOT, resolve(f)));
  if (files.length === 0) {
    console.error(`no ${suffix} files under ${paths.join(' ')}`);
    return 1;
  }
  const timings = readTimings(ROOT);
  const ordered = orderBySlowest(files, timings);

  // started first, awaited last: two processes of their own beside the test workers
  const checks = options.includes('--checks') ? [check('typecheck'), check('lint')] : [];

  const { run } = await import('node:test');
  const reporters = await import('node:test/reporters');
  const reporterName = flag('--test-reporter') ?? (process.stdout.isTTY ? 'spec' : 'tap');
  const reporter = reporters[reporterName];
  if (!reporter) {
    console.error(`scripts/test.mjs: no reporter ${reporterName}`);
    return 2;
  }
  const destination = flag('--test-reporter-destination');
  const out = destination ? createWriteStream(destination) : process.stdout;

  const concurrency = Number(flag('--test-concurrency') ?? defaultConcurrency());
  const measured = {};
  const started = Date.now();
  const buildDir = join(ROOT, '.test-build', `tests-${process.pid}`);
  removeBuildsOfEndedRuns();
  let built;
  try {
    built = await bundleTests(ROOT, ordered, buildDir);
  } catch (err) {
    rmSync(buildDir, { recursive: true, force: true });
    console.error(`scripts/test.mjs: the test files did not build\n${err.message}`);
    return 1;
  }
  // what node:test reports of a built file (its name, its file) is said of the source
  const source = (file) => built.get(file) ?? file;
  const cpuDir = mkdtempSync(join(tmpdir(), 'notify-test-cpu-'));
  process.env.NOTIFY_TEST_CPU_DIR = cpuDir;
  let failed = false;
  // a hung file (one waited 912 s for a process that never answered) fails by its name instead of
  // holding the run: node:test applies run()'s timeout to each file and SIGTERMs its process, and
  // test-cpu.mjs, in that process, stops what the file started
  const fileTimeout = Number(flag('--file-timeout') ?? 600);
  process.env.NOTIFY_TEST_RUNNER_PID = String(process.pid);
  const tests = run({ files: [...built.keys()], concurrency, timeout: fileTimeout > 0 ? fileTimeout * 1000 : Number.POSITIVE_INFINITY });
  const stream = tests.map((event) => {
    if (event.data?.file) event.data.file = source(event.data.file);
    if (typeof event.data?.name === 'string') event.data.name = source(event.data.name);
    return event;
  });
  tests.on('test:fail', (e) => {
    if (!e.todo && !e.skip) failed = true;
  });
  tests.on('test:complete', (e) => {
    // the file itself is reported as a test named by its path
    if (e.nesting === 0 && e.name === e.file) measured[relative(ROOT, source(e.file))] = e.details.duration_ms / 1000;
  });
  // resolves when the reporter has written everything (stdout itself is never ended)
  await pipeline(stream.compose(reporterName === 'spec' ? new reporter() : reporter), out);

  const wall = (Date.now() - started) / 1000;
  const cpu = readCpu(cpuDir, source);
  rmSync(cpuDir, { recursive: true, force: true });
  rmSync(buildDir, { recursive: true, force: true });
  const slowest = Object.entries(measured).sort((a, b) => b[1] - a[1]);
  console.error(`\nslowest files (wall s): ${slowest.slice(0, 8).map(([f, s]) => `${f} ${s.toFixed(1)}`).join(', ')}`);
  if (Object.keys(cpu).length > 0) {
    // CPU well under wall: the file mostly waits (timers, polling, scheduled times), and more files at
    // once would fill the cores; CPU near wall: it computes, and only less work makes it faster
    const sum = (values) => values.reduce((a, b) => a + b, 0);
    const of = (f) => (cpu[f] ? `${cpu[f].seconds.toFixed(1)} s, ${cpu[f].spawns} processes` : '?');
    console.error(`CPU of the slowest (their own and their child processes'): ${slowest.slice(0, 8).map(([f]) => `${f} ${of(f)}`).join('; ')}`);
    const cpuTotal = sum(Object.values(cpu).map((c) => c.seconds));
    console.error(`${Object.keys(measured).length} files in ${wall.toFixed(0)} s, ${concurrency} at a time: ${sum(Object.values(measured)).toFixed(0)} s of file wall time, ${cpuTotal.toFixed(0)} s of CPU`);
  }
  if (options.includes('--record-timings')) writeTimings(ROOT, { ...timings, ...measured });
  const cpuReport = flag('--cpu-report');
  if (cpuReport) {
    const rows = slowest.map(([f, s]) => [f, { wall: Math.round(s * 10) / 10, cpu: cpu[f] ? Math.round(cpu[f].seconds * 10) / 10 : null, processes: cpu[f]?.spawns ?? null }]);
    writeFileSync(cpuReport, `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
  }

  let checksFailed = false;
  for (const c of await Promise.all(checks)) {
    process.stderr.write(`\n${c.name}: ${c.code === 0 ? 'ok' : `FAILED (exit ${c.code})`} in ${c.seconds.toFixed(0)} s\n${c.code === 0 ? '' : c.output}`);
    if (c.code !== 0) checksFailed = true;
  }
  return failed || checksFailed ? 1 : 0;
}

/**
 * Three files per core, at most eight. A test file mostly waits (for its notify processes, a browser,
 * a scheduled time, a retry's backoff, PostgreSQL): the 198 files of a whole run used 433 s of CPU,
 * their own and their child processes', in 2,894 s of file wall time (--cpu-report, loaded machine).
 * Three at a time on two cores, the run lasted about a third of the files' summed wall time (512 s of
 * 1,517 s, quiet), the cores often idle; six at a time still ask less than the two cores on average.
 * The cap keeps the files' PostgreSQL connections under the server's default 100 on bigger machines.
 */
function defaultConcurrency() {
  return Math.min(8, 3 * availableParallelism());
}

/** `npm run -s <script>`, its output kept and shown once the tests are done (so it does not cut through theirs) */
function check(name) {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn('npm', ['run', '-s', name], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => {
      output += c;
    });
    child.stderr.on('data', (c) => {
      output += c;
    });
    child.on('error', (err) => done({ name, code: 1, output: String(err), seconds: (Date.now() - started) / 1000 }));
    child.on('exit', (code, signal) => done({ name, code: code ?? (signal ? 1 : 0), output, seconds: (Date.now() - started) / 1000 }));
  });
}

/** CPU seconds and processes started per file (repository-relative), from the records test-cpu.mjs wrote */
function readCpu(dir, source) {
  const cpu = {};
  for (const name of readdirSync(dir)) {
    try {
      const r = JSON.parse(readFileSync(join(dir, name), 'utf8'));
      const file = relative(ROOT, source(r.file));
      // a process the test file started with the same execArgv writes one too: the file's own, which includes it, is the largest
      if (!cpu[file] || cpu[file].seconds < r.self + r.children) cpu[file] = { seconds: r.self + r.children, spawns: r.spawns };
    } catch {
      // a record cut short by a killed process
    }
  }
  return cpu;
}

/** what an interrupted run left in .test-build (a run still going keeps its own) */
function removeBuildsOfEndedRuns() {
  const dir = join(ROOT, '.test-build');
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const pid = Number(/^tests-(\d+)$/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (err) {
      if (err.code === 'ESRCH') rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
}
