import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { readable } from '../../src/log.ts';
import { CliEnv } from '../reliability/helpers/processes.ts';

/**
 * What a CLI user sees when notify logs a warning (here: a short adminToken, logged whenever an
 * instance opens): a readable line on standard error, never a JSON line in the command's output.
 */
describe('CLI log lines', () => {
  const env = new CliEnv({ database: 'sqlite:n.db', adminToken: 'short', logLevel: 'warn' });
  after(() => env.cleanup());
  const WARNING = 'adminToken is shorter than 16 characters; use a long random value';

  test('a command: its output alone on stdout, the warning as "warning: ..." on stderr', async () => {
    assert.equal((await env.run(['migrate'])).code, 0);
    const r = await env.run(['campaigns:list']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'no campaigns\n');
    assert.equal(r.stderr, `warning: ${WARNING}\n`);
  });

  test('--json: stdout parses as JSON, the warning stays a machine-readable JSON line on stderr', async () => {
    const r = await env.run(['campaigns:list', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), []);
    const line = JSON.parse(r.stderr.trim()) as { level: number; msg: string };
    assert.equal(line.level, 40);
    assert.equal(line.msg, WARNING);
  });

  test('logFormat: json (here from the environment) keeps JSON lines for a command; text makes a worker readable', async () => {
    const json = await env.run(['campaigns:list'], 60_000, { NOTIFY_LOG_FORMAT: 'json' });
    assert.equal(json.stdout, 'no campaigns\n');
    assert.equal((JSON.parse(json.stderr.trim()) as { msg: string }).msg, WARNING);

    const worker = env.start(['worker', '--interval', '60'], { NOTIFY_LOG_FORMAT: 'text' });
    const deadline = Date.now() + 30_000;
    while (!worker.stdout().includes('notify worker: started') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    worker.proc.kill('SIGTERM');
    assert.equal(await worker.exited, 0, worker.stderr());
    assert.match(worker.stderr() + worker.stdout(), new RegExp(`^warning: ${WARNING}$`, 'm'));
  });

  test('a worker (a service) logs JSON lines by default, for a log collector', async () => {
    const worker = env.start(['worker', '--interval', '60']);
    const deadline = Date.now() + 30_000;
    while (!worker.stdout().includes('notify worker: started') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    worker.proc.kill('SIGTERM');
    assert.equal(await worker.exited, 0, worker.stderr());
    const line = (worker.stdout() + worker.stderr()).split('\n').find((l) => l.startsWith('{'));
    assert.equal((JSON.parse(line ?? '{}') as { msg?: string }).msg, WARNING);
  });
});

test('a readable line: level word, message, the error, then the other fields; pino plumbing left out', () => {
  const line = JSON.stringify({ level: 50, time: 1, pid: 2, hostname: 'h', name: 'notify', msg: 'delivery failed', err: { message: 'boom', stack: 'x' }, sendId: 3, to: ['a@example.com'] });
  assert.equal(readable(line), 'error: delivery failed: boom (sendId: 3, to: ["a@example.com"])\n');
  assert.equal(readable(JSON.stringify({ level: 30, msg: 'plain' })), 'info: plain\n');
  assert.equal(readable('not json'), 'not json\n', 'a line that is not JSON passes through');
});
