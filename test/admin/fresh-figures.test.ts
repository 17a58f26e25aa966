import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { serve } from '../helpers/http.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

/** The figures of one campaign's row on the dashboard, by column. */
function dashboardRow(html: string, id: number) {
  const row = html.slice(html.indexOf(`<td>${id}</td>`));
  const n = [...row.slice(0, row.indexOf('</tr>')).matchAll(/<td class="n">(\d+)<\/td>/g)].map((m) => Number(m[1]));
  assert.equal(n.length, 11, 'eleven figures in the row');
  return { total: n[0], sent: n[1], opened: n[4], clicked: n[6] };
}

/**
 * The demo's path: an email's link leads through /notify/click back to the dashboard of the same
 * server. The page the redirect lands on must count that click (and the open before it), though the
 * group commit has not written them yet.
 */
forEachEngine('admin figures include what this process just recorded', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  let srv: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    sink = await startSmtpSink();
    // a commit interval no test step waits for: only a flush by the page itself can show the events
    notify = await createNotify(testOptions(h.url, { adminToken: TOKEN, mailer: sink.url, tracking: { intervalMs: 60_000 } }));
    srv = await serve(notify);
  });
  after(async () => {
    await srv?.close();
    await notify?.close();
    await sink?.close();
  });

  test('open, click through the listener, land on the dashboard: opened 1, clicked 1; the campaign page and its JSON agree', async () => {
    await notify.contacts.upsert({ email: 'ada@example.com', lists: ['demo'] });
    const c = await notify.campaigns.create({ subject: 'Demo', markdown: `[See your click counted](${srv.url}/notify/admin)`, list: 'demo' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 1);
    await sink.waitFor(1);
    const html = String(sink.messages[0].parsed.html);
    const onServer = (href: string) => new URL(href.replace(/&amp;/g, '&')).href.replace(/^http:\/\/localhost:3000/, srv.url);
    const pixel = onServer(/<img src="([^"]+\/notify\/open\/[^"]+)"/.exec(html)![1]);
    const link = onServer(/href="([^"]+\/notify\/click\/[^"]+)"/.exec(html)![1]);

    assert.equal((await fetch(pixel)).status, 200);
    const click = await fetch(link, { redirect: 'manual' });
    assert.equal(click.status, 302);
    assert.equal(click.headers.get('location'), `${srv.url}/notify/admin`);
    const dashboard = await fetch(click.headers.get('location')!, { headers: auth });
    assert.equal(dashboard.status, 200);
    assert.deepEqual(dashboardRow(await dashboard.text(), c.id), { total: 1, sent: 1, opened: 1, clicked: 1 });

    // a second click, then the campaign page: every click in the per-link table, still one unique
    assert.equal((await fetch(link, { redirect: 'manual' })).status, 302);
    const page = await (await fetch(`${srv.url}/notify/admin/campaigns/${c.id}`, { headers: auth })).text();
    assert.match(page, /id="stat-opened">1</);
    assert.match(page, /id="stat-clicked">1</);
    assert.match(page, /<td class="n">2<\/td><td class="n">1<\/td><td class="n">\d<\/td>/, 'link 0: two clicks, one unique');
    const report = await (await fetch(`${srv.url}/notify/admin/campaigns/${c.id}/report.json`, { headers: auth })).json();
    assert.deepEqual(report.stats, { total: 1, sent: 1, failed: 0, opened: 1, clicked: 1 });
    assert.equal(report.links[0].clicks, 2);
  });
});
