import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { cpuSample, foreignCores } from '../../bench/lib/guard.ts';
import { HZ } from '../../bench/lib/machine.ts';

/** Node code that burns `ms` of CPU time (not wall time: the machine may be loaded) and prints its pid. */
const burn = (ms: number) => `console.log(process.pid); const c = process.cpuUsage(); while ((process.cpuUsage(c).user + process.cpuUsage(c).system) / 1000 < ${ms}) {}`;

function exited(pid: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setInterval(() => {
      if (!existsSync(`/proc/${pid}`)) resolve(clearInterval(t));
    }, 20);
  });
}

const procfs = existsSync('/proc/stat');

test('the CPU time of a child that ran and exited counts as ours, not as other work', { skip: !procfs && 'no /proc' }, async () => {
  const before = cpuSample();
  await new Promise((resolve) => spawn(process.execPath, ['-e', burn(400)], { stdio: 'ignore' }).on('exit', resolve));
  const after = cpuSample();
  assert.ok((after.own - before.own) / HZ >= 0.35, `own CPU grew by ${(after.own - before.own) / HZ} s, the child burned 0.4 s`);
});

test('a process outside our process tree counts as other work', { skip: !procfs && 'no /proc' }, async () => {
  // started through a shell that exits at once: the burner is re-parented, no longer our descendant
  const shell = spawn('sh', ['-c', `${JSON.stringify(process.execPath)} -e ${JSON.stringify(burn(500))} &`], { stdio: ['ignore', 'pipe', 'ignore'] });
  const shellExited = new Promise((resolve) => shell.on('exit', resolve));
  const pid = Number(await new Promise<string>((resolve) => shell.stdout.once('data', (b) => resolve(String(b)))));
  await shellExited;
  const before = cpuSample();
  await exited(pid);
  const after = cpuSample();
  const seconds = (after.at - before.at) / 1000;
  assert.ok((after.own - before.own) / HZ < 0.2, `own CPU grew by ${(after.own - before.own) / HZ} s while only the re-parented burner worked`);
  assert.ok(foreignCores(before, after) * seconds >= 0.3, `other work measured ${foreignCores(before, after) * seconds} s of CPU, the burner used ~0.5 s`);
});
