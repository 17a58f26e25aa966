// As deployed: a campaign made by the CLI with tracking off for it alone, sent by the CLI to a
// real SMTP server; its List-Unsubscribe is the short URL on a line of its own, every header
// line within 78, and a mail client's one-click POST to it, served by `notify serve`,
// unsubscribes the person. The long link of the body works too.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Deployment, describeEachEngine, waitUntil } from './harness.ts';
import { listUnsubscribeUrl } from './mail.ts';

const BODY = '<p>Hello {{ contact.name }}, see <a href="https://shop.example/spring">the shop</a>. <a href="{notify_unsubscribe_url}">Leave</a></p>';

describeEachEngine('as deployed: the short one-click link and per-campaign tracking from the CLI', (engine) => {
  let d: Deployment;
  before(async () => {
    d = await Deployment.open(engine);
    d.writeFile('readers.csv', ['email,name', 'ann@example.com,Ann', 'bob@example.com,Bob'].join('\n'));
    assert.match(await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']), /created 2/);
  });
  after(() => d?.close());

  test('--no-track-opens --no-track-clicks; List-Unsubscribe within 78; one-click POST unsubscribes', async () => {
    const id = (await d.cli(['campaigns:create', '--subject', 'Spring', '--html', BODY, '--list', 'readers', '--no-track-opens', '--no-track-clicks'])).trim();
    assert.match(id, /^\d+$/);
    await d.cli(['notify:send-campaign', id, '--all']);
    const mails = await waitUntil(() => (d.sink.messages.length >= 2 ? d.sink.messages : undefined), 30_000, `two messages (${d.describe()})`);
    for (const m of mails) {
      const head = m.raw.toString('latin1').split('\r\n\r\n')[0];
      assert.deepEqual(head.split('\r\n').filter((l) => l.length > 78), [], 'no header line over 78');
      // 74 characters on one line now that the token is 24: folded only when it would not fit
      assert.match(head, /^List-Unsubscribe:(\r\n)? <http:\/\/127\.0\.0\.1:\d+\/notify\/u\/[A-Za-z0-9_-]{24}>\r\n/m);
      assert.doesNotMatch(String(m.parsed.html), /\/notify\/(open|click)\//, 'no pixel, no tracked link');
      assert.match(String(m.parsed.html), /href="https:\/\/shop\.example\/spring"/);
    }
    const server = await d.serve();
    const ann = mails.find((m) => m.envelope.to.includes('ann@example.com'))!;
    const res = await fetch(listUnsubscribeUrl(ann), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /a\*\*@example\.com will not receive/);
    // Bob uses the long link of the body (the form mail already delivered carries)
    const bob = mails.find((m) => m.envelope.to.includes('bob@example.com'))!;
    const long = /href="([^"]*\/notify\/unsubscribe\/[^"]*)"/.exec(String(bob.parsed.html))![1].replace(/&amp;/g, '&');
    assert.equal((await fetch(long, { method: 'POST' })).status, 200);
    const unsubscribed = await d.cli(['contacts:export', '--status', 'unsubscribed']);
    for (const who of ['ann@example.com', 'bob@example.com']) assert.ok(unsubscribed.includes(who), unsubscribed);
    assert.equal(await server.process.stop(), 0);
  });
});
