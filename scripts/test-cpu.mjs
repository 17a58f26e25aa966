// Loaded into every test file's process by scripts/test.mjs: when the process exits it writes the CPU
// seconds it used, its own and those of the processes it started and waited for (`notify` processes,
// browsers, bundlers), and how many processes it started, so the runner can print them beside wall
// time per file. A file that mostly
// waits (sleeps, polling, a scheduled time) shows far less CPU than wall; one that computes shows both
// close. Servers the tests share (PostgreSQL, Redis) are not counted. Linux only (/proc); elsewhere
// nothing is written and the runner prints wall times alone.
import { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.NOTIFY_TEST_CPU_DIR;
const file = process.argv[1];
if (dir && file && process.env.NODE_TEST_CONTEXT) {
  // spawn, exec, execFile and fork all start their process through this method (the *Sync ones do not:
  // their CPU is counted, they are not)
  let spawns = 0;
  const live = new Set();
  const start = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function (...args) {
    spawns++;
    const result = start.apply(this, args);
    live.add(this);
    this.once('exit', () => live.delete(this));
    return result;
  };
  // The runner stops a file that outlives --file-timeout with SIGTERM; the notify processes, browsers
  // and servers it started would outlive it, holding ports and CPU for the rest of the run. Only in the
  // file's own process (its parent is the runner): a process the file starts with the same execArgv
  // keeps its own SIGTERM handling, which tests of graceful shutdown rely on.
  if (process.ppid === Number(process.env.NOTIFY_TEST_RUNNER_PID)) {
    process.once('SIGTERM', () => {
      for (const child of live) child.kill('SIGKILL');
      process.exit(1);
    });
  }
  process.on('exit', () => {
    try {
      // after the ")" that ends the command name: state is field 3, so utime (14) ... cstime (17) are 11 ... 14
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = fields.slice(11, 15).map(Number);
      const seconds = (a, b) => (ticks[a] + ticks[b]) / 100; // USER_HZ, 100 on Linux
      writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ file, self: seconds(0, 1), children: seconds(2, 3), spawns }));
    } catch {
      // no /proc: no CPU figure for this file
    }
  });
}
