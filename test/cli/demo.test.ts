import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { CliEnv, waitUntil } from '../reliability/helpers/processes.ts';

/**
 * `notify demo` as a newcomer runs it: the real CLI in its own process and folder, no mail server.
 * The admin URL it prints works with its token and refuses without; a message from its outbox is
 * clicked through the click endpoint and unsubscribed from, and the campaign's report counts both.
 */
describe('notify demo', () => {
  const env = new CliEnv({ logLevel: 'warn' });
  after(() => env.cleanup());
  const outbox = () => join(env.dir, 'notify-demo', 'outbox');
  const messages = () => readdirSync(outbox()).filter((f) => f.endsWith('.eml'));

  test('serves the admin pages with its token; the outbox message is clicked and unsubscribed from, the stats count it; SIGTERM exits 0', async () => {
    const demo = env.start(['demo', '--port', '0']);
    try {
      const printed = await waitUntil(() => /Admin: (http:\/\/admin:([^@\s]+)@([^/\s]+))\/notify\/admin/.exec(demo.stdout()) ?? undefined, 60_000, `the admin URL (stderr: ${demo.stderr()})`);
      const token = decodeURIComponent(printed[2]);
      const base = `http://${printed[3]}`;
      const auth = { authorization: `Basic ${Buffer.from(`admin:${token}`).toString('base64')}` };
      assert.ok(token.length >= 16, 'a random token of its own');
      assert.match(demo.stdout(), /campaign (\d+) sent 5 messages \(1 suppressed/);
      const campaignId = /campaign (\d+) sent/.exec(demo.stdout())![1];

      const page = await fetch(`${base}/notify/admin`, { headers: auth });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /Demo: spring newsletter/);
      assert.equal((await fetch(`${base}/notify/admin`)).status, 401, 'no token');
      assert.equal((await fetch(`${base}/notify/admin`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 401, 'wrong token');
      const outboxPage = await fetch(`${base}/notify/admin/outbox`, { headers: auth });
      assert.match(await outboxPage.text(), /\d+ messages/);

      // the drip sequence's first step joins the campaign's messages: 5 + 5 in the outbox
      assert.match(demo.stdout(), /drip sequence "Demo: welcome series": 5 enrolled, first step sent 5/);
      const dripSent = 5;
      assert.equal(messages().length, 5 + dripSent);
      const subjects = (await Promise.all(messages().map((f) => simpleParser(readFileSync(join(outbox(), f)))))).map((m) => m.subject);
      assert.equal(subjects.filter((s) => /^Welcome aboard, /.test(s ?? '')).length, 5, 'one welcome step per enrolled contact');
      const mails = await Promise.all(messages().map((f) => simpleParser(readFileSync(join(outbox(), f)))));
      const mail = mails.find((m) => /this is the notify demo/.test(m.subject ?? ''))!;
      const html = String(mail.html);
      const link = /href="([^"]*\/notify\/click\/[^"]+)"[^>]*>See your click counted/.exec(html)?.[1]?.replace(/&amp;/g, '&');
      assert.ok(link?.startsWith(`${base}/notify/click/`), `a tracked link to this server: ${link}`);
      const click = await fetch(link!, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } });
      assert.equal(click.status, 302);
      assert.equal(click.headers.get('location'), `${base}/notify/admin`);
      // where the redirect lands, at once (no waiting for the group commit): the click is counted
      const landed = await fetch(click.headers.get('location')!, { headers: auth });
      assert.equal(landed.status, 200);
      const dashboard = await landed.text();
      const row = dashboard.slice(dashboard.indexOf(`<td>${campaignId}</td>`));
      const figures = [...row.slice(0, row.indexOf('</tr>')).matchAll(/<td class="n">(\d+)<\/td>/g)].map((m) => Number(m[1]));
      assert.equal(figures[6], 1, `the dashboard row of campaign ${campaignId} shows Clicked 1: ${figures.join(' ')}`);
      const campaignPage = await (await fetch(`${base}/notify/admin/campaigns/${campaignId}`, { headers: auth })).text();
      assert.match(campaignPage, /id="stat-clicked">1</, 'the campaign page counts the click just made');
      const unsubscribeUrl = /<(http[^>]+)>/.exec(mail.headerLines.find((h) => h.key === 'list-unsubscribe')?.line ?? '')?.[1];
      assert.ok(unsubscribeUrl?.startsWith(`${base}/notify/u/`), `List-Unsubscribe: ${unsubscribeUrl}`);
      const oneClick = await fetch(unsubscribeUrl!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      assert.ok(oneClick.ok, `one-click unsubscribe: ${oneClick.status}`);

      const report = await waitUntil(async () => {
        const r = (await (await fetch(`${base}/notify/admin/campaigns/${campaignId}/report.json`, { headers: auth })).json()) as { stats: { clicked: number }; unsubscribed: number };
        return r.stats.clicked === 1 && r.unsubscribed === 1 ? r : undefined;
      }, 10_000, 'the click and the unsubscribe in the report');
      assert.deepEqual(report.stats, { total: 6, sent: 5, failed: 0, opened: 0, clicked: 1 });

      const busy = await env.run(['demo', '--port', new URL(base).port]);
      assert.equal(busy.code, 1);
      assert.match(busy.stderr, /port \d+ is in use on 127\.0\.0\.1; pass --port/);
      assert.equal(messages().length, 5 + dripSent, 'a second demo on a busy port leaves the running one alone');
    } finally {
      demo.proc.kill('SIGTERM');
    }
    assert.equal(await demo.exited, 0, demo.stderr());
  });

  test('a rerun starts fresh; --no-serve exits; a folder it did not make is left alone; bad --port', async () => {
    const again = await env.run(['demo', '--no-serve']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /campaign 1 sent 5 messages/, 'a new database, not a second campaign');
    assert.match(again.stdout, /first step sent 5/);
    assert.doesNotMatch(again.stdout, /\/notify\/admin|password/, 'no admin URL: nothing serves it, and the next run makes a new token');
    assert.match(again.stdout, /Not serving \(--no-serve\): run `npx notify demo` for the admin pages/);
    assert.match(again.stdout, /NOTIFY_DATABASE=sqlite:notify-demo\/notify\.db npx notify stats 1/);
    assert.equal(messages().length, 10, 'the old messages are gone');

    const foreign = join(env.dir, 'mine');
    mkdirSync(foreign);
    writeFileSync(join(foreign, 'notes.txt'), 'keep me');
    const refused = await env.run(['demo', '--no-serve', '--dir', 'mine']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /mine exists and was not made by notify demo/);
    assert.deepEqual(readdirSync(foreign), ['notes.txt']);

    const badPort = await env.run(['demo', '--port', 'eighty']);
    assert.equal(badPort.code, 1);
    assert.match(badPort.stderr, /--port must be a number from 0 to 65535/);
  });
});
