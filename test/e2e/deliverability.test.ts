// Deliverability as deployed: notify.config.json turns tracking off with string options, contacts
// with an international domain are imported by the CLI, and a separate `notify worker` process
// sends the scheduled campaign to a real SMTP server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Deployment, describeEachEngine, type NotifyProcess, waitUntil } from './harness.ts';
import { listUnsubscribeUrl } from './mail.ts';

const BODY = '<p>Hello {{ contact.name }}, see <a href="https://shop.example/spring">the shop</a>.</p>';

describeEachEngine('as deployed: tracking off and punycode domains, sent by notify worker', (engine) => {
  let d: Deployment;
  let worker: NotifyProcess | undefined;

  before(async () => {
    d = await Deployment.open(engine, { config: { trackOpens: 'false', trackClicks: 'false', fromEmail: 'news@bücher.example' } });
    d.writeFile('readers.csv', ['email,name', 'zoe@bücher.example,Zoë', 'ann@example.com,Ann'].join('\n'));
    assert.match(await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']), /created 2/);
  });
  after(() => d?.close());

  test('no notify URL but the unsubscribe link; the international domain as punycode on the wire', async () => {
    const started = Date.now();
    const id = (await d.cli(['campaigns:create', '--subject', 'Spring', '--html', BODY, '--list', 'readers'])).trim().split('\n')[0];
    const oneCall = Date.now() - started;
    assert.match(id, /^\d+$/);
    worker = await d.worker(0.5);
    // far enough ahead for the CLI process to store it before then: four times what a CLI call just
    // took, at least 4 s, so the margin follows the machine's load
    const sendAt = new Date(Date.now() + Math.max(4_000, 4 * oneCall));
    assert.match(await d.cli(['campaigns:schedule', id, sendAt.toISOString()]), /scheduled for/);
    const mails = await waitUntil(() => (d.sink.messages.length >= 2 ? d.sink.messages : undefined), sendAt.getTime() - Date.now() + 60_000, `two messages (${d.describe()})`);

    for (const m of mails) {
      const all = `${m.parsed.html}\n${m.parsed.text}`.replace(/&amp;/g, '&');
      const mine = (all.match(/https?:\/\/[^\s"'<>)\]]+/g) ?? []).filter((u) => u.startsWith(d.baseUrl));
      assert.ok(mine.length > 0, 'the layout keeps its unsubscribe link');
      for (const u of mine) assert.match(u, /\/notify\/unsubscribe\/[A-Za-z0-9_-]{22}\?s=[A-Za-z0-9_-]{22}$/, `only unsubscribe links point at notify: ${u}`);
      assert.ok(all.includes('https://shop.example/spring'), 'the shop link goes straight to the shop');
      assert.doesNotMatch(String(m.parsed.html), /\/notify\/open\//);
      assert.match(listUnsubscribeUrl(m), /\/notify\/u\/[A-Za-z0-9_-]{24}$/);
    }
    assert.ok(d.sink.commands.includes('RCPT TO:<zoe@xn--bcher-kva.example>'), d.sink.commands.join('\n'));
    assert.ok(d.sink.commands.includes('MAIL FROM:<news@xn--bcher-kva.example>'), d.sink.commands.join('\n'));
    const zoe = mails.find((m) => /^To: zoe@xn--bcher-kva\.example$/m.test(m.raw.toString('latin1')));
    assert.ok(zoe, 'the To header holds the punycode domain');
    assert.equal(await worker.stop(), 0);
  });
});
