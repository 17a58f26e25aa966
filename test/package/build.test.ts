import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import { NotifyProcess } from '../e2e/harness.ts';
import { filesRun } from './ran-from.ts';
import { readmeBlock } from './readme.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };

/** the caller's environment minus its notify settings: only the temp project configures notify */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^notify[._]/i.test(k)));

/**
 * The package as a user gets it: the sources copied to a temp folder, built there (so the checkout's
 * dist/ is untouched), packed with `npm pack`, and the tarball unpacked into a temp project's
 * node_modules the way npm installs it (its dependencies linked from this checkout, so no network),
 * its bin linked into node_modules/.bin. Everything then runs on plain node and through npx.
 */
describe(`the packed ${PACKAGE.name} tarball, installed in a project`, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'notify-pkg-'));
  const app = join(tmp, 'app');
  const source = join(tmp, 'source');
  const installed = join(app, 'node_modules', PACKAGE.name);
  let tarball = '';
  after(() => rmSync(tmp, { recursive: true, force: true }));

  before(async () => {
    mkdirSync(source);
    for (const entry of ['package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'src', 'views']) cpSync(join(ROOT, entry), join(source, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'));
    // --noCheck: the same emit (JavaScript and declarations) without checking the types again, which
    // `npm test`'s type-check does over these sources and the tests; half the build's CPU
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--sourceMap', 'false', '--noCheck'], { cwd: source });
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', tmp], { cwd: source, env: cleanEnv() });
    tarball = join(tmp, stdout.trim().split('\n').pop()!);

    const modules = join(app, 'node_modules');
    mkdirSync(join(modules, '.bin'), { recursive: true });
    for (const dep of readdirSync(join(ROOT, 'node_modules'))) if (!dep.startsWith('.')) symlinkSync(join(ROOT, 'node_modules', dep), join(modules, dep));
    mkdirSync(installed);
    await run('tar', ['xzf', tarball, '-C', installed, '--strip-components=1']);
    for (const [name, file] of Object.entries(PACKAGE.bin)) {
      chmodSync(join(installed, file), 0o755);
      symlinkSync(join('..', PACKAGE.name, file), join(modules, '.bin', name));
    }
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-app', private: true, dependencies: { [PACKAGE.name]: PACKAGE.version } }));
  });

  test('the tarball holds the compiled library, the CLI sources and the views, and no tests', () => {
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'bin/notify.js', 'src/cli/main.ts', 'views/notify/layouts/default.liquid', 'README.md']) {
      assert.ok(statSync(join(installed, file)).isFile(), file);
    }
    assert.deepEqual(readdirSync(installed).filter((f) => ['test', 'bench', 'node_modules', 'notify.db'].includes(f)), []);
  });

  test('imported by its name on plain node, no TypeScript loader: the pixel, the unsubscribe page (shipped view) and the form helper', async () => {
    writeFileSync(
      join(app, 'loop.mjs'),
      `import { createNotify, notify_form } from '${PACKAGE.name}';
const notify = await createNotify({ database: 'sqlite:loop.db', configFile: false, envFile: false, env: {}, mailer: 'log', logLevel: 'silent' });
const contact = await notify.contacts.upsert({ email: 'Ann@Example.com' });
const pixel = await notify.fetch(new Request('http://app.test/notify/open/' + 'x'.repeat(22)));
const page = await notify.fetch(new Request('http://app.test/notify/unsubscribe/' + contact.unsubscribe_token));
const html = await page.text();
const after = await notify.contacts.get(contact.id);
await notify.close();
console.log(JSON.stringify({ pixel: [pixel.status, (await pixel.arrayBuffer()).byteLength], page: page.status, unsubscribedPage: /unsubscribed/i.test(html), status: after.status, form: notify_form({ list: 'news' }).includes('notify_hp') }));
`,
    );
    const { stdout } = await run(process.execPath, ['loop.mjs'], { cwd: app, env: { PATH: process.env.PATH } });
    assert.deepEqual(JSON.parse(stdout.trim()), { pixel: [200, 43], page: 200, unsubscribedPage: true, status: 'unsubscribed', form: true });
  });

  test("the README's library example runs as written on plain node: one campaign created, sent into the outbox, its stats read", async () => {
    writeFileSync(join(app, 'campaign.mjs'), readmeBlock('## Use it as a library', 'js', 'getCampaignStats'));
    const { stdout } = await run(process.execPath, ['campaign.mjs'], { cwd: app, env: cleanEnv() });
    assert.match(stdout, /sent: 1,[\s\S]*remaining: 0/);
    assert.match(stdout, /\{ total: 1, sent: 1, failed: 0, opened: 0, clicked: 0 \}/);
    const [file, ...more] = readdirSync(join(app, 'outbox')).filter((f) => f.endsWith('.eml'));
    assert.equal(more.length, 0);
    const mail = await simpleParser(readFileSync(join(app, 'outbox', file)));
    assert.equal(mail.subject, 'Spring news for Ann');
    assert.equal(mail.to && !Array.isArray(mail.to) ? mail.to.text : '', 'ann@example.com');
    assert.match(String(mail.html), /href="https:\/\/example\.com\/notify\/click\/[^"]+"/);
    assert.match(mail.headerLines.find((h) => h.key === 'list-unsubscribe')?.line ?? '', /<https:\/\/example\.com\/notify\/u\/[A-Za-z0-9_-]{24}>/);
  });

  test('the installed CLI works through npx and /bin/sh: --version, stats of that campaign, and the README CLI example', async () => {
    const sh = (line: string) => run('/bin/sh', ['-c', line], { cwd: app, env: cleanEnv(), timeout: 120_000 });
    assert.equal((await sh('npx notify --version')).stdout.trim(), PACKAGE.version);
    const stats = JSON.parse((await sh('npx notify stats 1 --json')).stdout) as { stats: unknown };
    assert.deepEqual(stats.stats, { total: 1, sent: 1, failed: 0, opened: 0, clicked: 0 });

    writeFileSync(join(app, '.env'), 'NOTIFY_FROM_EMAIL=news@example.com\nNOTIFY_MAILER=outbox:./outbox\n');
    writeFileSync(join(app, 'spring.md'), '# Spring\n\nHello {{ contact.name }}.');
    writeFileSync(join(app, 'people.csv'), 'email,name\nbo@example.com,Bo\ncy@example.com,Cy\n');
    // the README block as written: it imports the people into the list `news` itself
    const { stdout } = await sh(readmeBlock('## CLI', 'sh', 'campaigns:create'));
    assert.match(stdout, /created 2, updated 0, unchanged 0, rejected 0/);
    assert.match(stdout, /campaign 2 run 1: sent 2, failed 0, suppressed 0 - campaign sent/);
    assert.match(stdout, /Campaign 2: Spring news for \{\{ contact\.name \}\} \(sent\)/);
  });

  test('the installed CLI runs the compiled JavaScript of dist/, no TypeScript loader, whatever dates the package manager gave the files', async () => {
    // some package managers date each file as they write it: a source written after dist/ must not matter
    utimesSync(join(installed, 'src/cli/main.ts'), new Date(), new Date(Date.now() + 60_000));
    const { files, stdout } = await filesRun(join(app, 'node_modules/.bin/notify'), ['--help'], app, installed);
    assert.match(stdout, /notify:send-campaign/);
    const ran = [...files].sort();
    assert.ok(ran.some((f) => f.startsWith('dist/cli/')), `the code of dist/cli/ ran: ${ran.join(', ')}`);
    assert.deepEqual(ran.filter((f) => f === 'tsx' || f.startsWith('src/')), [], 'no source file, no tsx');
  });

  test('notify serve from the installed package: the pixel, a capture and its confirmation email, a shipped view, the admin script; SIGTERM stops it', async () => {
    const dir = join(app, 'serving');
    mkdirSync(dir);
    writeFileSync(join(dir, '.env'), 'NOTIFY_FROM_EMAIL=news@example.com\nNOTIFY_DOUBLE_OPT_IN=true\nNOTIFY_ADMIN_TOKEN=an-admin-token-of-some-length\n');
    const serve = new NotifyProcess('notify serve', spawn(join(app, 'node_modules/.bin/notify'), ['serve', '--port', '0', '--host', '127.0.0.1'], { cwd: dir, env: cleanEnv() }));
    try {
      const [, url] = await serve.waitForOutput(/listening on (http:\/\/\S+)/, 90_000);
      const pixel = await fetch(`${url}/notify/open/${'x'.repeat(22)}`);
      assert.deepEqual([pixel.status, pixel.headers.get('content-type'), (await pixel.arrayBuffer()).byteLength], [200, 'image/gif', 43]);
      const capture = await fetch(`${url}/notify/capture`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ email: 'dee@example.com' }) });
      assert.equal(capture.status, 200, await capture.clone().text());
      assert.equal(((await capture.json()) as { ok: boolean }).ok, true);
      const [eml, ...more] = readdirSync(join(dir, 'outbox'));
      assert.equal(more.length, 0);
      const mail = await simpleParser(readFileSync(join(dir, 'outbox', eml)));
      assert.equal(mail.to && !Array.isArray(mail.to) ? mail.to.text : '', 'dee@example.com');
      assert.match(String(mail.html), /\/notify\/confirm\//);
      const invalid = await fetch(`${url}/notify/unsubscribe/${'y'.repeat(22)}`);
      assert.equal(invalid.status, 404);
      assert.match(await invalid.text(), /<html/i);
      const script = await fetch(`${url}/notify/admin/console.js`);
      assert.equal(script.status, 200);
      assert.equal(await script.text(), readFileSync(join(installed, 'views/notify/admin/console.js'), 'utf8'));
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${serve.describe()}`, { cause: err });
    } finally {
      assert.equal(await serve.stop(), 0, serve.describe());
    }
  });

  test('in a checkout, a fresh build is what runs, and a source edited after it runs through tsx, never the older dist/', async () => {
    const bin = join(source, 'bin/notify.js');
    const built = await filesRun(bin, ['--version'], source, source);
    assert.equal(built.stdout.trim(), PACKAGE.version);
    assert.ok([...built.files].some((f) => f.startsWith('dist/cli/')), 'just built: dist/ runs');
    assert.deepEqual([...built.files].filter((f) => f === 'tsx' || f.startsWith('src/')), [], 'just built: no source file, no tsx');

    const main = join(source, 'src/cli/main.ts');
    writeFileSync(main, readFileSync(main, 'utf8').replace(".description('Email campaigns", ".description('Edited after the build: email campaigns"));
    const edited = await filesRun(bin, ['--help'], source, source);
    assert.match(edited.stdout, /Edited after the build: email campaigns/);
    assert.ok(edited.files.has('src/cli/main.ts'), [...edited.files].join(', '));
    assert.ok(!readFileSync(join(source, 'dist/cli/main.js'), 'utf8').includes('Edited after the build'), 'dist/ itself is the older build');
  });

  test("a tarball unpacked by hand outside node_modules runs dist/ too: tar dates the folders now, the files with the tarball's date", async () => {
    const unpacked = join(tmp, 'unpacked');
    mkdirSync(unpacked);
    await run('tar', ['xzf', tarball, '-C', unpacked, '--strip-components=1']);
    symlinkSync(join(ROOT, 'node_modules'), join(unpacked, 'node_modules'));
    const { files, stdout } = await filesRun(join(unpacked, 'bin/notify.js'), ['--version'], unpacked, unpacked);
    assert.equal(stdout.trim(), PACKAGE.version);
    assert.ok([...files].some((f) => f.startsWith('dist/cli/')), [...files].join(', '));
    assert.deepEqual([...files].filter((f) => f === 'tsx' || f.startsWith('src/')), []);

    // a copy slimmed to what runs (a container image without src/): dist/, nothing to compare it with
    rmSync(join(unpacked, 'src'), { recursive: true });
    const slim = await filesRun(join(unpacked, 'bin/notify.js'), ['--version'], unpacked, unpacked);
    assert.equal(slim.stdout.trim(), PACKAGE.version);
  });
});
