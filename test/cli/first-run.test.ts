import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { BIN } from '../helpers/compiled-entry.ts';
import { forEachEngine } from '../helpers/engines.ts';
import { CliEnv, waitUntil } from '../reliability/helpers/processes.ts';

const run = promisify(execFile);
const PACKAGE = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };

/** What a newcomer meets in a fresh folder, through the real CLI process. */
describe('the CLI for a newcomer', () => {
  const env = new CliEnv({ logLevel: 'silent' });
  after(() => env.cleanup());

  test('--version prints the package version, from the published bin (the sources through tsx) as from the compiled CLI', async () => {
    const r = await env.run(['--version']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), PACKAGE.version);
    const bin = await run(process.execPath, [BIN, '--version'], { cwd: env.dir });
    assert.equal(bin.stdout.trim(), PACKAGE.version);
  });

  test('an unknown command suggests the closest one, namespace included; nonsense gets no guess', async () => {
    const typo = await env.run(['send-campaign', '1']);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /unknown command 'send-campaign'; did you mean 'notify notify:send-campaign'\?/);
    const r = await env.run(['frobnicate']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /unknown command 'frobnicate' \('notify --help' lists them all\)/);
  });

  test('stats (and every other read-only command) where there is no database says where it looked, exits 1 and creates nothing', async () => {
    const before = readdirSync(env.dir).sort();
    for (const args of [['stats', '1'], ['stats', '1', '--json'], ['campaigns:list'], ['contacts:export']]) {
      const r = await env.run(args);
      assert.equal(r.code, 1, args.join(' '));
      assert.match(r.stderr, new RegExp(`No database at ${join(env.dir, 'notify.db').replace(/[/.]/g, '\\$&')} \\(database: sqlite:\\./notify\\.db\\).*NOTIFY_DATABASE in \\.env.*\\[NOT_FOUND\\]`), args.join(' '));
      assert.equal(r.stdout, '', `${args.join(' ')}: nothing on standard output`);
      assert.deepEqual(readdirSync(env.dir).sort(), before, `${args.join(' ')}: no notify.db (nor -wal/-shm) left behind`);
    }
  });
});

forEachEngine('the CLI with a database', ({ url }) => {
  const env = new CliEnv({ database: url, mailer: 'outbox:./outbox', logLevel: 'silent' });
  after(() => env.cleanup());

  test('no sender: campaigns:create warns and notify:send-campaign fails saying how to set one', async () => {
    writeFileSync(join(env.dir, 'c.csv'), 'email\nann@example.com\n');
    assert.equal((await env.run(['contacts:import', 'c.csv'])).code, 0);
    const created = await env.run(['campaigns:create', '--subject', 'Hi', '--markdown', 'Hello']);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /warning: no sender address.*NOTIFY_FROM_EMAIL in \.env or the environment/);
    const blank = await env.run(['campaigns:create', '--subject', 'Hi', '--markdown', 'Hello'], 60_000, { NOTIFY_FROM_EMAIL: '   ' });
    assert.match(blank.stderr, /warning: no sender address/, 'a sender of blanks is no sender');
    const sent = await env.run(['notify:send-campaign', created.stdout.trim()]);
    assert.equal(sent.code, 1);
    assert.match(sent.stderr, /No from address: set the fromEmail option \("fromEmail" in notify\.config\.json, NOTIFY_FROM_EMAIL in \.env or the environment, or createNotify\(\{ fromEmail \}\)\).*\[MISSING_SENDER\]/);
  });

  test('stats explains suppressed only when there is one; a read-only command opens an existing database', async () => {
    writeFileSync(join(env.dir, '.env'), 'NOTIFY_FROM_EMAIL=news@example.com\n');
    const created = await env.run(['campaigns:create', '--subject', 'Hi again', '--markdown', 'Hello']);
    const id = created.stdout.trim();
    assert.equal((await env.run(['notify:send-campaign', id])).code, 0);
    const r = await env.run(['stats', id]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /sent\s+1 {2}100\.0%/);
    assert.match(r.stdout, /^ {2}suppressed\s+0$/m, 'a bare 0, no explanation of nothing');

    // an unsubscribed contact: the next campaign counts it suppressed, and now stats says what that means
    writeFileSync(join(env.dir, 'gone.csv'), 'email\ngone@example.com\n');
    assert.equal((await env.run(['contacts:import', 'gone.csv', '--status', 'unsubscribed'])).code, 0);
    const next = (await env.run(['campaigns:create', '--subject', 'Third', '--markdown', 'Hello'])).stdout.trim();
    assert.equal((await env.run(['notify:send-campaign', next, '--all'])).code, 0);
    const withOne = await env.run(['stats', next]);
    assert.equal(withOne.code, 0, withOne.stderr);
    assert.match(withOne.stdout, /^ {2}suppressed\s+1 {2}not sent: the contact had unsubscribed, bounced or complained$/m);
  });
});

describe('notify serve', () => {
  const env = new CliEnv({ database: 'sqlite:n.db', adminToken: 'admin-token-0123456789', logLevel: 'silent' });
  after(() => env.cleanup());

  test('prints the admin URL (without the token) when adminToken is set, and it answers with the token', async () => {
    const serve = env.start(['serve', '--port', '0', '--host', '127.0.0.1']);
    try {
      const admin = await waitUntil(() => /admin pages at (http:\/\/127\.0\.0\.1:\d+\/notify\/admin)/.exec(serve.stdout())?.[1], 30_000, `the admin URL (stderr: ${serve.stderr()})`);
      assert.doesNotMatch(serve.stdout(), /admin-token-0123456789/);
      const auth = { authorization: `Basic ${Buffer.from('me:admin-token-0123456789').toString('base64')}` };
      assert.equal((await fetch(admin, { headers: auth })).status, 200);
    } finally {
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
    }
  });
});
