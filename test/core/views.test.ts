import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { createViews } from '../../src/render/views.ts';

test('application views override shipped ones, output is escaped, names are checked', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-views-'));
  const views = createViews(dir);
  const shipped = await views.render('notify/layouts/default', { subject: '<b>Hi</b>', content: '<p>body</p>' });
  assert.match(shipped, /<title>&lt;b&gt;Hi&lt;\/b&gt;<\/title>/);
  assert.match(shipped, /<p>body<\/p>/);
  mkdirSync(join(dir, 'notify/layouts'), { recursive: true });
  writeFileSync(join(dir, 'notify/layouts/default.liquid'), 'MINE {{ subject }}');
  const overridden = createViews(dir);
  assert.equal(overridden.isOverridden('notify/layouts/default'), true);
  assert.equal(await overridden.render('notify/layouts/default', { subject: '"x"' }), 'MINE &#34;x&#34;');
  await assert.rejects(views.render('../../etc/passwd'), (e) => isNotifyError(e, 'INVALID_INPUT'));
  await assert.rejects(views.render('notify/missing_view'), (e) => isNotifyError(e, 'TEMPLATE_ERROR'));
});
