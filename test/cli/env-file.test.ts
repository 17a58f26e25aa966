import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { cliEntry } from '../helpers/compiled-entry.ts';
import { forEachEngine } from '../helpers/engines.ts';
import { CliEnv } from '../reliability/helpers/processes.ts';

const exec = promisify(execFile);

/** the caller's shell minus its notify settings, so only the test's folder configures the CLI */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^notify[._]/i.test(k)));

/**
 * Runs a command line through Debian's /bin/sh (dash), as npx and npm scripts do: dash drops
 * environment names with a dot, so settings must reach notify through a form that survives it.
 */
async function viaDash(dir: string, line: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return exec('/bin/sh', ['-c', `"${process.execPath}" "${cliEntry()}" ${line}`], { cwd: dir, env: { ...cleanEnv(), ...env }, timeout: 60_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

forEachEngine('a .env file configures every CLI command, through dash', ({ url }) => {
  const env = new CliEnv({});
  after(() => env.cleanup());

  test('batchSize, database, mailer and sender from .env: a 3-contact campaign goes out one per run', async () => {
    writeFileSync(join(env.dir, 'contacts.csv'), 'email,name\nann@example.com,Ann\nbob@example.com,Bob\ncy@example.com,Cy\n');
    writeFileSync(
      join(env.dir, '.env'),
      ['# as a deployment writes it', `NOTIFY_DATABASE=${url}`, 'notify.batchSize = 1', "NOTIFY_MAILER='outbox:./outbox'", 'export NOTIFY_FROM_EMAIL="news@example.com"', 'NOTIFY_LOG_LEVEL=warn'].join('\n'),
    );
    const imported = await viaDash(env.dir, 'contacts:import contacts.csv');
    assert.equal(imported.code, 0, imported.stderr);
    const created = await viaDash(env.dir, "campaigns:create --subject 'Hi {{ contact.name }}' --markdown 'Hello'");
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();

    const first = await viaDash(env.dir, `notify:send-campaign ${id}`);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /sent 1, failed 0, suppressed 0, 2 remaining/, 'batchSize 1 from .env');
    assert.equal(readdirSync(join(env.dir, 'outbox')).filter((f) => f.endsWith('.eml')).length, 1);

    // the real environment wins over .env
    const rest = await viaDash(env.dir, `notify:send-campaign ${id}`, { NOTIFY_BATCH_SIZE: '5' });
    assert.match(rest.stdout, /sent 2, failed 0, suppressed 0 - campaign sent/);

    const stats = JSON.parse((await viaDash(env.dir, `stats ${id} --json`)).stdout) as { stats: unknown };
    assert.deepEqual(stats.stats, { total: 3, sent: 3, failed: 0, opened: 0, clicked: 0 });
  });
});

test('--env-file <f> before or after the command; bad files and names fail with the file and line', async (t) => {
  const env = new CliEnv({ logLevel: 'silent' });
  t.after(() => env.cleanup());
  const db = `sqlite:${join(env.dir, 'n.db')}`;
  writeFileSync(join(env.dir, 'prod.env'), `NOTIFY_DATABASE=${db}\n`);
  for (const args of [['--env-file', 'prod.env', 'migrate'], ['migrate', '--env-file', 'prod.env']]) {
    const r = await env.run(args);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /applied: |schema is up to date/);
  }
  assert.ok(readdirSync(env.dir).includes('n.db'), 'the database named in prod.env');

  // Node itself looks at a script's `--env-file` argument and exits 9 on a missing file before any
  // code of ours runs (nodejs/node#54232); either way the run fails naming the file
  const missing = await env.run(['stats', '1', '--env-file', 'nope.env']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /nope\.env: not found|Env file nope\.env does not exist/);
  assert.ok(!readdirSync(env.dir).includes('notify.db'));

  writeFileSync(join(env.dir, 'bad.env'), `NOTIFY_DATABASE=${db}\nNOTIFY_BATCH_SIZE=lots\n`);
  const badValue = await env.run(['notify:process-drips', '--env-file', 'bad.env']);
  assert.equal(badValue.code, 1, badValue.stderr);
  assert.match(badValue.stderr, /Option 'batchSize' from NOTIFY_BATCH_SIZE in .*bad\.env:2 must be a number \(got "lots"\) \[CONFIG_INVALID\]/);

  writeFileSync(join(env.dir, '.env'), `NOTIFY_DATABASE=${db}\n`);
  const typo = await env.run(['migrate'], 60_000, { NOTIFY_BATCHSIZE: '5' });
  assert.equal(typo.code, 1);
  assert.match(typo.stderr, /Unknown option 'NOTIFY_BATCHSIZE' \(from environment variable NOTIFY_BATCHSIZE\); did you mean NOTIFY_BATCH_SIZE\?/);
  const reserved = await env.run(['migrate'], 60_000, { NOTIFY_TEST_PG_URL: 'postgres://x', NOTIFY_DEBUG: '1', NOTIFY_SOCKET: '/run/x' });
  assert.equal(reserved.code, 0, reserved.stderr);
});

test("dash drops 'notify.batchSize' from the environment (why the README shows .env and NOTIFY_* only)", async (t) => {
  const env = new CliEnv({ database: 'sqlite:n.db', logLevel: 'silent' });
  t.after(() => env.cleanup());
  const dotted = await exec('env', ['notify.batchSize=abc', '/bin/sh', '-c', `"${process.execPath}" "${cliEntry()}" migrate`], { cwd: env.dir, env: cleanEnv() });
  assert.match(dotted.stdout, /applied: /, 'an invalid batchSize would have failed: the name never reached notify');
  const snake = await viaDash(env.dir, 'migrate', { NOTIFY_BATCH_SIZE: 'abc' });
  assert.equal(snake.code, 1);
  assert.match(snake.stderr, /Option 'batchSize' from environment variable NOTIFY_BATCH_SIZE must be a number/);
});
