import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { envName, loadConfig } from '../src/config.ts';
import { isNotifyError } from '../src/errors.ts';
import { readmeBlock } from './package/readme.ts';

const noFile = { configFile: false as const, env: {} };

test('defaults are the documented ones', async () => {
  const c = await loadConfig({}, noFile);
  assert.equal(c.batchSize, 200);
  assert.equal(c.retryDelayMinutes, 5);
  assert.equal(c.maxRetries, 3);
  assert.equal(c.staleLockMinutes, 30);
  assert.equal(c.throttleMs, 0);
  assert.equal(c.captureRateLimit, 10);
  assert.equal(c.honeypot, true);
  assert.equal(c.testMode, false);
  assert.equal(c.trackIpAddress, false);
  assert.equal(c.webhookDriver, '');
  assert.equal(c.trackingHost, '');
  assert.equal(c.fromName, '');
  assert.equal(c.database, 'sqlite:./notify.db');
  assert.equal(c.mailer, 'outbox:./outbox');
  assert.equal(c.trustProxy, false);
  assert.equal(c.unsubscribeConfirm, false);
  assert.ok(Object.isFrozen(c));
});

test('sources layer: file < env NOTIFY_X < env notify.x < options', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  writeFileSync(join(dir, 'notify.config.json'), JSON.stringify({ batchSize: 10, throttleMs: 7, fromName: 'File' }));
  const env = { NOTIFY_BATCH_SIZE: '20', 'notify.throttleMs': '9', NOTIFY_THROTTLE_MS: '8', 'notify.testMode': 'true' };
  const c = await loadConfig({ fromName: 'Opt' }, { cwd: dir, env });
  assert.equal(c.batchSize, 20);
  assert.equal(c.throttleMs, 9);
  assert.equal(c.testMode, true);
  assert.equal(c.fromName, 'Opt');
  assert.equal(envName('staleLockMinutes'), 'NOTIFY_STALE_LOCK_MINUTES');
});

test('a .js config file is read too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  writeFileSync(join(dir, 'notify.config.js'), 'export default { maxRetries: 9 };');
  assert.equal((await loadConfig({}, { cwd: dir, env: {} })).maxRetries, 9);
});

async function configError(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (err) {
    assert.ok(isNotifyError(err), String(err));
    return err.message;
  }
  assert.fail('expected a configuration error');
}

test('a wrong value names the option and the source it came from', async () => {
  assert.match(await configError(() => loadConfig({}, { configFile: false, env: { 'notify.batchSize': 'abc' } })), /'batchSize' from environment variable notify\.batchSize must be a number/);
  assert.match(await configError(() => loadConfig({}, { configFile: false, env: { NOTIFY_RETRY_DELAY_MINUTES: '-5' } })), /'retryDelayMinutes' from environment variable NOTIFY_RETRY_DELAY_MINUTES must be at least 0/);
  assert.match(await configError(() => loadConfig({ webhookDriver: 'sparkpost' }, noFile)), /'webhookDriver' from createNotify\(\) options must be empty, one of ses/);
  assert.match(await configError(() => loadConfig({ database: 'mysql://x' }, noFile)), /'database' from createNotify\(\) options must be 'sqlite/);
  assert.match(await configError(() => loadConfig({ testMode: 'maybe' as never }, noFile)), /'testMode'.*must be true or false/);
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  writeFileSync(join(dir, 'notify.config.json'), JSON.stringify({ batchSize: 0 }));
  assert.match(await configError(() => loadConfig({}, { cwd: dir, env: {} })), /'batchSize' from config file .*notify\.config\.json must be at least 1/);
});

test('typos and broken files are errors, not silently ignored', async () => {
  assert.match(await configError(() => loadConfig({ batchsize: 5 } as never, noFile)), /Unknown option 'batchsize'/);
  assert.match(await configError(() => loadConfig({}, { configFile: false, env: { 'notify.bachSize': '5' } })), /Unknown option 'bachSize' \(from environment variable notify\.bachSize\)/);
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  writeFileSync(join(dir, 'notify.config.json'), '{ not json');
  assert.match(await configError(() => loadConfig({}, { cwd: dir, env: {} })), /Could not read config file/);
  assert.match(await configError(() => loadConfig({}, { configFile: 'missing.json', env: {}, cwd: dir })), /does not exist/);
});

test('list options accept comma-separated env values', async () => {
  const c = await loadConfig({}, { configFile: false, env: { 'notify.snsTopicArns': 'arn:a, arn:b' } });
  assert.deepEqual(c.snsTopicArns, ['arn:a', 'arn:b']);
});

/** a temp working folder holding the given files */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'notify-cfg-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test('.env in the working folder: both spellings, spaces around =, quotes, escapes, comments, export prefix', async () => {
  const dir = folder({
    '.env': [
      '# notify settings',
      'notify.batchSize = 5',
      'NOTIFY_THROTTLE_MS=7   # milliseconds',
      "export NOTIFY_FROM_NAME='The #1 Shop'",
      'NOTIFY_FROM_EMAIL="news@example.com" # the sender',
      'NOTIFY_ADMIN_TOKEN="a\\"b\\\\c\\nd\\q"',
      'NOTIFY_SECRET=pass#word',
      '',
      '   NOTIFY_TEST_MODE=yes',
      'DATABASE_URL=postgres://app@db/app',
      'NOTIFY_MAILER=',
      'NOTIFY_MAILER="log"',
    ].join('\r\n'),
  });
  const c = await loadConfig({}, { cwd: dir, env: {} });
  assert.equal(c.batchSize, 5);
  assert.equal(c.throttleMs, 7);
  assert.equal(c.fromName, 'The #1 Shop', 'single quotes are literal, # inside them is no comment');
  assert.equal(c.fromEmail, 'news@example.com');
  assert.equal(c.adminToken, 'a"b\\c\nd\\q', 'double-quote escapes; an unknown escape keeps its backslash');
  assert.equal(c.secret, 'pass#word', '# without a space before it is part of the value');
  assert.equal(c.testMode, true);
  assert.equal(c.mailer, 'log', 'a later line wins');
  assert.equal(process.env.NOTIFY_BATCH_SIZE, undefined, 'the process environment is left as it was');
});

test('precedence, later wins: defaults, config file, .env, environment, createNotify() options', async () => {
  const dir = folder({
    'notify.config.json': JSON.stringify({ batchSize: 10, throttleMs: 10, maxRetries: 10, fromName: 'file' }),
    '.env': 'NOTIFY_BATCH_SIZE=20\nnotify.throttleMs=20\nNOTIFY_MAX_RETRIES=20\nNOTIFY_STALE_LOCK_MINUTES=20\n',
  });
  const c = await loadConfig({ maxRetries: 40 }, { cwd: dir, env: { NOTIFY_THROTTLE_MS: '30', 'notify.maxRetries': '30' } });
  assert.equal(c.retryDelayMinutes, 5, 'default');
  assert.equal(c.fromName, 'file', 'config file over defaults');
  assert.equal(c.batchSize, 20, '.env over the config file');
  assert.equal(c.staleLockMinutes, 20);
  assert.equal(c.throttleMs, 30, 'the environment (NOTIFY_*) over .env (notify.*)');
  assert.equal(c.maxRetries, 40, 'createNotify() options over everything');
});

test('envFile names another file (relative to cwd); envFile: false reads none', async () => {
  const dir = folder({ '.env': 'NOTIFY_BATCH_SIZE=5', 'prod.env': 'NOTIFY_BATCH_SIZE=9' });
  assert.equal((await loadConfig({}, { cwd: dir, env: {}, envFile: 'prod.env' })).batchSize, 9);
  assert.equal((await loadConfig({}, { cwd: dir, env: {}, envFile: join(dir, 'prod.env') })).batchSize, 9);
  assert.equal((await loadConfig({}, { cwd: dir, env: {}, envFile: false })).batchSize, 200);
  assert.equal((await loadConfig({}, { cwd: folder({}), env: {} })).batchSize, 200, 'no .env: nothing to read, no error');
});

test('reserved NOTIFY_* names (test and bench servers, NOTIFY_DEBUG, systemd NOTIFY_SOCKET) are not options and no error', async () => {
  const env = { NOTIFY_TEST_PG_URL: 'postgres://x', NOTIFY_TEST_REDIS_URL: 'redis://x', NOTIFY_TEST_CHROMIUM: '/x', NOTIFY_BENCH_PG_URL: 'p', NOTIFY_FUZZ_RUNS: '5', NOTIFY_DEBUG: '1', NOTIFY_SOCKET: '/run/systemd/notify' };
  const dir = folder({ '.env': 'NOTIFY_TEST_PG_URL=postgres://postgres@127.0.0.1:5432/test\nNOTIFY_BATCH_SIZE=3' });
  assert.equal((await loadConfig({}, { cwd: dir, env })).batchSize, 3);
});

test('bad .env input is an error naming the file and line', async () => {
  const cases: [string, RegExp][] = [
    ['NOTIFY_BATCH_SIZE=5\nNOTIFY_FROM_EMAIL', /\.env:2: expected NAME=value, got "NOTIFY_FROM_EMAIL"/],
    ['NOTIFY_FROM_NAME="The Shop', /\.env:1: unterminated " quote/],
    ["\n\nNOTIFY_FROM_NAME='The Shop", /\.env:3: unterminated ' quote/],
    ['NOTIFY_FROM_NAME="a" b', /\.env:1: unexpected "b" after the closing quote/],
    ['NOTIFY_BACH_SIZE=5', /Unknown option 'NOTIFY_BACH_SIZE' \(from NOTIFY_BACH_SIZE in .*\.env:1\); did you mean NOTIFY_BATCH_SIZE\?/],
    ['# x\nnotify.bachSize=5', /Unknown option 'bachSize' \(from notify\.bachSize in .*\.env:2\); did you mean notify\.batchSize\?/],
    ['NOTIFY_WHATEVER=5', /Unknown option 'NOTIFY_WHATEVER' \(from NOTIFY_WHATEVER in .*\.env:1\)$/],
    ['\nNOTIFY_BATCH_SIZE=abc', /Option 'batchSize' from NOTIFY_BATCH_SIZE in .*\/\.env:2 must be a number \(got "abc"\)/],
    ['notify.testMode = maybe', /Option 'testMode' from notify\.testMode in .*\/\.env:1 must be true or false/],
  ];
  for (const [text, expected] of cases) {
    const dir = folder({ '.env': text });
    assert.match(await configError(() => loadConfig({}, { cwd: dir, env: {} })), expected, text);
  }
  const dir = folder({});
  assert.match(await configError(() => loadConfig({}, { cwd: dir, env: {}, envFile: 'missing.env' })), /Env file missing\.env does not exist \(looked for .*missing\.env\)/);
});

test('an unknown NOTIFY_* variable in the environment is an error naming it', async () => {
  assert.match(await configError(() => loadConfig({}, { configFile: false, env: { NOTIFY_BATCHSIZE: '5' } })), /Unknown option 'NOTIFY_BATCHSIZE' \(from environment variable NOTIFY_BATCHSIZE\); did you mean NOTIFY_BATCH_SIZE\?/);
  assert.equal((await loadConfig({}, { configFile: false, env: { notify_batch_size: '5', NOTIFYX: '1' } })).batchSize, 200, 'other names are not ours');
});

test("the README's .env example reads as its comments say", async () => {
  const dir = folder({ '.env': readmeBlock('## Configuration', 'sh', 'notify.batchSize') });
  const c = await loadConfig({}, { cwd: dir, env: {} });
  assert.deepEqual(
    { batchSize: c.batchSize, database: c.database, fromName: c.fromName, adminToken: c.adminToken },
    { batchSize: 50, database: 'postgres://notify@db.internal:5432/app', fromName: 'The #1 Shop', adminToken: 'a-long-s3cret"token' },
  );
});

test('baseUrl and trackingHost: ASCII, no white space or <>" (they go whole into List-Unsubscribe <...>), at most 900 characters', async () => {
  for (const bad of ['https://bücher.example', 'https:///shop.example', 'https://shop.example/a b', 'https://shop.example/<x>', 'https://shop.example/"x"', 'https://shop.example/\tx', 'ftp://shop.example', `https://${'h'.repeat(892)}.example`]) {
    assert.match(await configError(() => loadConfig({ baseUrl: bad }, noFile)), /'baseUrl' from createNotify\(\) options must be/, bad);
    assert.match(await configError(() => loadConfig({ trackingHost: bad }, noFile)), /'trackingHost' from createNotify\(\) options must be/, bad);
  }
  const longest = `https://${'h'.repeat(884)}.example`;
  assert.equal(longest.length, 900);
  assert.equal((await loadConfig({ baseUrl: longest }, noFile)).baseUrl, longest);
  assert.equal((await loadConfig({ baseUrl: 'https://xn--bcher-kva.example:8443/mail/' }, noFile)).baseUrl, 'https://xn--bcher-kva.example:8443/mail');
});
