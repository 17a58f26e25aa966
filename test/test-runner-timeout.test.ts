// scripts/test.mjs's time limit per file: a file that hangs (one once waited 912 s for a process that
// never answered) fails by its name and the run goes on, instead of the whole run waiting for ever.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runnerProject } from './helpers/runner-project.ts';

const { dir, project, run, remove } = runnerProject();
after(remove);
project('true');
writeFileSync(join(dir, 'test/fast.test.ts'), "import { test } from 'node:test';\ntest('fast', () => {});\n");

test('a file that hangs fails the run by its name after --file-timeout, and the processes it started are stopped', async () => {
  const pidFile = join(dir, 'hung-child.pid');
  writeFileSync(
    join(dir, 'test/hangs.test.ts'),
    [
      "import { spawn } from 'node:child_process';",
      "import { writeFileSync } from 'node:fs';",
      "import { test } from 'node:test';",
      "test('hangs', async () => {",
      "  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
      `  writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));`,
      '  await new Promise(() => setInterval(() => {}, 1000));',
      '});',
    ].join('\n'),
  );
  // without a time limit for the file the run waits for ever: run()'s own limit ends it (exit code null)
  const r = await run('.test.ts', '--test-reporter=tap', '--file-timeout=5', 'test/hangs.test.ts', 'test/fast.test.ts');
  rmSync(join(dir, 'test/hangs.test.ts'));
  assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
  const pid = Number(readFileSync(pidFile, 'utf8'));
  // killed, it may stay a zombie for a moment until init reaps it
  let alive = true;
  for (let tries = 0; alive && tries < 50; tries++) {
    try {
      process.kill(pid, 0);
      await new Promise((r) => setTimeout(r, 100));
    } catch {
      alive = false;
    }
  }
  if (alive) process.kill(pid, 'SIGKILL');
  assert.match(r.stdout, /not ok \d+ - \S*hangs\.test\.ts\n[\s\S]*test timed out after 5000ms/, 'reported under its source name');
  assert.match(r.stdout, /^ok \d+ - fast$/m, 'the other file still ran');
  assert.equal(alive, false, 'the process the hung file started is gone');
});
