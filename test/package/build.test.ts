import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The published package is the compiled dist/ (npm runs `prepare` = `npm run build`): an
 * application on plain Node, with no TypeScript loader, imports it and the whole loop works,
 * shipped views included. Built into a temp package folder so the checkout's dist/ is untouched.
 */
const pkg = mkdtempSync(join(tmpdir(), 'notify-pkg-'));
after(() => rmSync(pkg, { recursive: true, force: true }));

test('the built package runs on plain node: createNotify, a contact, the pixel and the unsubscribe page', async () => {
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(pkg, 'dist'), '--sourceMap', 'false']);
  symlinkSync(join(ROOT, 'views'), join(pkg, 'views'));
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'notify', type: 'module', exports: { '.': './dist/index.js' } }));
  const app = join(pkg, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'main.mjs'),
    `import { createNotify, notify_form } from '../dist/index.js';
const notify = await createNotify({ database: 'sqlite:' + process.argv[2], configFile: false, env: {}, mailer: 'log', fromEmail: 'news@example.com', logLevel: 'silent' });
const contact = await notify.contacts.upsert({ email: 'Ann@Example.com' });
const pixel = await notify.fetch(new Request('http://app.test/notify/open/' + 'x'.repeat(22)));
const page = await notify.fetch(new Request('http://app.test/notify/unsubscribe/' + contact.unsubscribe_token));
const html = await page.text();
const after = await notify.contacts.get(contact.id);
await notify.close();
console.log(JSON.stringify({ pixel: [pixel.status, (await pixel.arrayBuffer()).byteLength], page: page.status, unsubscribedPage: /unsubscribed/i.test(html), status: after.status, form: notify_form({ list: 'news' }).includes('notify_hp') }));
`,
  );
  const { stdout } = await run(process.execPath, [join(app, 'main.mjs'), join(pkg, 'app.db')], { cwd: app, env: { PATH: process.env.PATH } });
  assert.deepEqual(JSON.parse(stdout.trim()), { pixel: [200, 43], page: 200, unsubscribedPage: true, status: 'unsubscribed', form: true });
});
