import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { CliEnv } from '../reliability/helpers/processes.ts';
import { FIXTURES, MAILCHIMP } from './helpers.ts';

/** The commands as a user runs them (SQLite; the storage paths are tested on both engines in-process). */
describe('notify contacts:import and contacts:export', () => {
  const env = new CliEnv({ database: 'sqlite:./notify.db', logLevel: 'silent' });
  after(() => env.cleanup());

  test('import prints created / updated / unchanged / rejected with lines; a Latin-1 file is refused before any row is stored', async () => {
    copyFileSync(join(FIXTURES, MAILCHIMP.subscribed), join(env.dir, 'sub.csv'));
    writeFileSync(join(env.dir, 'more.csv'), 'email,name\nada@example.com,\nbad-address,X\nnew@example.com,New\n');
    writeFileSync(join(env.dir, 'latin1.csv'), Buffer.from('email,name\nfirst@example.com,First\nlat@example.com,José\n', 'latin1'));
    const first = await env.run(['contacts:import', 'sub.csv', '--list', 'imported']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^created 3, updated 0, unchanged 0, rejected 0$/m);
    const more = await env.run(['contacts:import', 'more.csv']);
    assert.match(more.stdout, /^created 1, updated 0, unchanged 1, rejected 1$/m);
    assert.match(more.stderr, /^line 3: .*bad-address/m);
    const latin = await env.run(['contacts:import', 'latin1.csv']);
    assert.equal(latin.code, 1);
    assert.match(latin.stderr, /not UTF-8 text \(line 3\).*--encoding latin1 \[INVALID_INPUT\]/);
    const out = await env.run(['contacts:export', '--status', 'subscribed']);
    assert.doesNotMatch(out.stdout, /first@example\.com/, 'nothing from the refused file was stored');
  });

  test('export writes the CSV to --out; an unknown list leaves no file', async () => {
    const r = await env.run(['contacts:export', '--list', 'VIP', '--out', 'vip.csv']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /exported 1 contacts to vip\.csv/);
    const csv = readFileSync(join(env.dir, 'vip.csv'), 'utf8');
    assert.match(csv, /^email,name,status,lists,created_at,address,.*\r\nada@example\.com,Ada Lovelace,subscribed,"VIP,imported|^email/);
    assert.match(csv, /ada@example\.com,Ada Lovelace,subscribed,/);
    const missing = await env.run(['contacts:export', '--list', 'nope', '--out', 'nope.csv']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No list named "nope" \[NOT_FOUND\]/);
    assert.equal(existsSync(join(env.dir, 'nope.csv')), false);
  });
});
