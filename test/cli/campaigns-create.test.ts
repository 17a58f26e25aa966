import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createNotify } from '../../src/notify.ts';
import { CliEnv } from '../reliability/helpers/processes.ts';

describe('notify campaigns:create', () => {
  const env = new CliEnv({ logLevel: 'silent' });
  // absolute paths: the instances this test opens resolve relative ones against its own folder
  writeFileSync(join(env.dir, 'notify.config.json'), JSON.stringify({ database: `sqlite:${join(env.dir, 'n.db')}`, mailer: `outbox:${join(env.dir, 'outbox')}`, fromEmail: 'news@example.com', markdownPath: env.dir, logLevel: 'silent' }));
  after(() => env.cleanup());
  const open = () => createNotify({ configFile: join(env.dir, 'notify.config.json'), cwd: env.dir, env: {} });

  test('prints the new id; the campaign is stored as given and sends with notify:send-campaign', async () => {
    writeFileSync(join(env.dir, 'spring.md'), '# Spring\n\nHi {{ contact.name }}, [read more](https://example.com/spring).');
    const notify = await open();
    for (const name of ['Ann', 'Bob']) await notify.contacts.upsert({ email: `${name.toLowerCase()}@example.com`, name, lists: ['news'] });
    await notify.contacts.upsert({ email: 'other@example.com' });
    await notify.close();

    const r = await env.run([
      'campaigns:create', '--subject', 'Spring for {{ contact.name }}', '--markdown-file', 'spring.md', '--list', 'news',
      '--name', 'Spring 2026', '--from-name', 'The Shop', '--from-email', 'shop@example.com', '--layout', 'notify/layouts/default',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\d+\n$/, 'stdout is the id alone, for scripts');
    assert.match(r.stderr, /send it with: notify notify:send-campaign \d+ --all/);
    const id = Number(r.stdout);

    const check = await open();
    const c = await check.campaigns.get(id);
    await check.close();
    assert.deepEqual(
      { name: c?.name, subject: c?.subject, markdown_file: c?.markdown_file, list: c?.list, from_name: c?.from_name, from_email: c?.from_email, layout: c?.layout, status: c?.status },
      { name: 'Spring 2026', subject: 'Spring for {{ contact.name }}', markdown_file: 'spring.md', list: 'news', from_name: 'The Shop', from_email: 'shop@example.com', layout: 'notify/layouts/default', status: 'draft' },
    );

    const sent = await env.run(['notify:send-campaign', String(id), '--all']);
    assert.equal(sent.code, 0, sent.stderr);
    const files = readdirSync(join(env.dir, 'outbox')).filter((f) => f.endsWith('.eml'));
    assert.equal(files.length, 2, 'the list, not every contact');
    const mail = files.map((f) => readFileSync(join(env.dir, 'outbox', f), 'utf8')).join('\n');
    assert.match(mail, /Subject: Spring for Ann/);
    assert.match(mail, /From: The Shop <shop@example\.com>/);
  });

  test('--json prints the record; --html and --markdown bodies', async () => {
    const [html, md] = await Promise.all([
      env.run(['campaigns:create', '-s', 'Hi', '--html', '<p>Hello</p>', '--json']),
      env.run(['campaigns:create', '-s', 'Hi', '--markdown', '**Hello**', '--text', 'Hello']),
    ]);
    assert.equal(html.code, 0, html.stderr);
    const record = JSON.parse(html.stdout);
    assert.equal(record.html, '<p>Hello</p>');
    assert.equal(record.list, null);
    assert.equal(record.status, 'draft');
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /^\d+\n$/);
    assert.notEqual(Number(md.stdout), record.id);
  });

  test('bad input: a clear message on stderr, exit 1, nothing stored', async () => {
    const cases: [string[], RegExp][] = [
      [['--markdown', 'x'], /required option '-s, --subject <subject>'/],
      [['-s', 'x'], /needs a body: html, markdown, markdownFile or text \[INVALID_INPUT\]/],
      [['-s', 'x', '--html', '<p>x</p>', '--markdown', 'x'], /only one of html, markdown or markdownFile \(got html, markdown\)/],
      [['-s', '   ', '--markdown', 'x'], /subject is required \[INVALID_INPUT\]/],
      [['-s', 'x\r\nBcc: a@example.com', '--markdown', 'x'], /\[HEADER_INJECTION\]/],
      [['-s', 'x', '--markdown-file', '../../etc/passwd'], /outside markdownPath \[PATH_ESCAPE\]/],
      [['-s', 'x', '--markdown-file', 'missing.md'], /"missing.md" does not exist .*\[NOT_FOUND\]/],
      [['-s', 'x', '--markdown', 'Hi {% if %}'], /\[TEMPLATE_ERROR\]/],
      [['-s', 'x', '--markdown', 'x', '--from-email', 'not an address'], /Invalid from address .*\[INVALID_EMAIL\]/],
      [['-s', 'x', '--markdown', 'x', '--layout', '../secret'], /Invalid layout name .*\[INVALID_INPUT\]/],
      [['-s', 'x', '--markdown', 'x', '--layout', 'brand/missing'], /Layout brand\/missing not found .*\[NOT_FOUND\]/],
      [['-s', 'x', '--markdown', 'x', 'stray'], /too many arguments/],
      [['-s', 'x', '--markdown', 'x', '--bogus'], /unknown option '--bogus'/],
    ];
    const before = await countCampaigns(open);
    // four processes at a time: thirteen tsx start-ups at once overrun a 2-core machine's timeouts
    const results: Awaited<ReturnType<typeof env.run>>[] = [];
    for (let i = 0; i < cases.length; i += 4) results.push(...(await Promise.all(cases.slice(i, i + 4).map(([args]) => env.run(['campaigns:create', ...args])))));
    results.forEach((r, i) => {
      assert.equal(r.code, 1, `${cases[i][0].join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, cases[i][1], cases[i][0].join(' '));
      assert.equal(r.stdout, '');
    });
    assert.equal(await countCampaigns(open), before);
  });

  test('--track-opens/--no-track-opens and --track-clicks/--no-track-clicks are stored; neither follows the options; --track-opens=maybe is refused', async () => {
    const runs = await Promise.all([
      env.run(['campaigns:create', '-s', 'Quiet', '--html', '<p><a href="https://shop.example/">shop</a></p>', '--no-track-opens', '--no-track-clicks', '--json']),
      env.run(['campaigns:create', '-s', 'Loud', '--html', '<p>x</p>', '--track-opens', '--track-clicks', '--json']),
      env.run(['campaigns:create', '-s', 'Default', '--html', '<p>x</p>', '--json']),
    ]);
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const [quiet, loud, plain] = runs.map((r) => JSON.parse(r.stdout));
    assert.deepEqual([quiet.track_opens, quiet.track_clicks], [false, false]);
    assert.deepEqual([loud.track_opens, loud.track_clicks], [true, true]);
    assert.deepEqual([plain.track_opens, plain.track_clicks], [null, null]);

    const before = await countCampaigns(open);
    for (const bad of ['--track-opens=maybe', '--no-track-clicks=yes']) {
      const r = await env.run(['campaigns:create', '-s', 'Hi', '--html', '<p>x</p>', bad]);
      assert.equal(r.code, 1, bad);
      assert.match(r.stderr, new RegExp(`unknown option '${bad}'`));
    }
    assert.equal(await countCampaigns(open), before, 'nothing stored');

    // the quiet campaign goes out with no pixel and its link straight to the shop
    const notify = await open();
    await notify.contacts.upsert({ email: 'quiet@example.com' });
    await notify.close();
    const sent = await env.run(['notify:send-campaign', String(quiet.id), '--all']);
    assert.equal(sent.code, 0, sent.stderr);
    const mail = readdirSync(join(env.dir, 'outbox'))
      .filter((f) => f.endsWith('.eml'))
      .map((f) => readFileSync(join(env.dir, 'outbox', f), 'utf8'))
      .find((m) => /Subject: Quiet/.test(m))!;
    assert.match(mail, /href=3D"https:\/\/shop\.example\/"|href="https:\/\/shop\.example\/"/);
    assert.doesNotMatch(mail, /notify\/open\/|notify\/click\//);
  });
});

async function countCampaigns(open: () => ReturnType<typeof createNotify>): Promise<number> {
  const notify = await open();
  try {
    const row = await notify.context.store.db.selectFrom('notify_campaigns').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await notify.close();
  }
}
