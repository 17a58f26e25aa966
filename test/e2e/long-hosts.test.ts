// Long host and domain names as deployed: notify.config.json names a tracking host, a sender domain,
// a List-Id domain and a Feedback-ID template at the longest that fit a 78-character header line,
// the CLI imports a list with a long name and `notify notify:send-campaign` (its own process) sends
// to a real SMTP server. One character more of an option and every command refuses to start. A
// tracking host longer than the List-Unsubscribe line holds is folded inside the angle brackets:
// DKIM still verifies and the one-click POST, to the URL as a mail client takes it from the header
// (white space dropped, as RFC 2369 asks, or kept, as mailparser gives it), unsubscribes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { dkimKey, verifyDkim } from '../helpers/dkim.ts';
import { domainOfLength } from '../helpers/domains.ts';
import { type Deployment as D, Deployment, describeEachEngine } from './harness.ts';
import { listUnsubscribeUrl, recipient } from './mail.ts';

const TRACKING_HOST = `https://${domainOfLength(41 - 'https://'.length, 't')}`;
const FROM_DOMAIN = domainOfLength(52, 'f');
const LIST_ID_DOMAIN = domainOfLength(60, 'l');
const FEEDBACK_ID = `{id}:{list}:{kind}:${'s'.repeat(77 - 16 - 14 - 8 - 3)}`;
const LIST = 'Readers of the very long weekly newsletter about spring gardens';

describeEachEngine('as deployed: hosts and domains at the longest that fit a header line', (engine) => {
  let d: D;

  before(async () => {
    d = await Deployment.open(engine, {
      config: { trackingHost: TRACKING_HOST, fromEmail: `news@${FROM_DOMAIN}`, fromName: 'Frühlings-Newsletter der Gärtnerei', listIdDomain: LIST_ID_DOMAIN, feedbackId: FEEDBACK_ID },
    });
    d.writeFile('readers.csv', ['email,name', 'ann@example.com,Ann', 'zoe@example.com,Zoë'].join('\n'));
    assert.match(await d.cli(['contacts:import', 'readers.csv', '--list', LIST]), /created 2/);
  });
  after(() => d?.close());

  test('every header line within 78; the values read back whole', async () => {
    const id = (await d.cli(['campaigns:create', '--subject', 'Spring is here — Frühling ist da, und die Beete warten auf Sie', '--html', '<p>Hi</p>', '--list', LIST])).trim().split('\n')[0];
    assert.match(await d.cli(['notify:send-campaign', id]), /sent 2/);
    assert.equal(d.sink.messages.length, 2);
    for (const m of d.sink.messages) {
      const head = m.raw.toString('utf8').split('\r\n\r\n')[0];
      assert.deepEqual(
        head.split('\r\n').filter((l) => l.length > 78),
        [],
      );
      assert.match(listUnsubscribeUrl(m), new RegExp(`^${TRACKING_HOST.replace(/\./g, '\\.')}/notify/u/[A-Za-z0-9_-]{24}$`));
      const parsed = await simpleParser(m.raw);
      assert.match(String(parsed.messageId), new RegExp(`^<[A-Za-z0-9_-]{22}@${FROM_DOMAIN.replace(/\./g, '\\.')}>$`));
      assert.equal(parsed.from?.value[0].address, `news@${FROM_DOMAIN}`);
      const listId = (parsed.headers.get('list') as { id?: { name?: string } }).id?.name ?? '';
      // the list's label is cut to what the line holds (14 characters here), with a hash of the whole label
      const hash = createHash('sha256').update('readers-of-the-very-long-weekly-newsletter-about-spring-gardens').digest('hex').slice(0, 6);
      assert.equal(listId, `readers-${hash}.${LIST_ID_DOMAIN}`);
      assert.match(String(parsed.headers.get('feedback-id')), new RegExp(`^${id}:readers-of-the-[a-z-]*[a-f0-9]{6}:campaign:s+$`));
    }
  });

  test('one character more of listIdDomain, of the sender domain or of the Feedback-ID: commands refuse to start, naming the option', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ listIdDomain: domainOfLength(61, 'l') }, /Option 'listIdDomain' from .*notify\.config\.json must be at most 60 characters.*\[CONFIG_INVALID\]/],
      [{ fromEmail: `news@${domainOfLength(53, 'f')}` }, /Option 'fromEmail' from .*notify\.config\.json has a domain of 53 characters; at most 52 fit the Message-ID.*\[CONFIG_INVALID\]/],
      [{ feedbackId: `${FEEDBACK_ID}x` }, /Option 'feedbackId' from .*notify\.config\.json can make a Feedback-ID of 78 characters.*\[CONFIG_INVALID\]/],
    ];
    for (const [options, message] of cases) {
      d.writeConfig('notify.config.json', { ...d.defaults(), ...options });
      const r = await d.run(['campaigns:list']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr.replace(/\s+/g, ' '), message);
    }
    d.writeConfig('notify.config.json', { ...d.defaults(), listIdDomain: LIST_ID_DOMAIN });
    assert.equal((await d.run(['campaigns:list'])).code, 0);
  });
});

// 66 characters: the longest whose `<host/notify/u/` part fits a line, so the fold goes before the token
const LONG_HOST = `https://${domainOfLength(66 - 'https://'.length, 'g')}`;

describeEachEngine('as deployed: a tracking host too long for one List-Unsubscribe line', (engine) => {
  let d: D;
  const key = dkimKey();

  before(async () => {
    d = await Deployment.open(engine, { config: { trackingHost: LONG_HOST, dkim: { domainName: 'news.example', keySelector: 's1', privateKey: key.privateKey } } });
    d.writeFile('readers.csv', ['email,name', 'ann@example.com,Ann', 'bob@example.com,Bob'].join('\n'));
    assert.match(await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']), /created 2/);
  });
  after(() => d?.close());

  test('folded inside the brackets before the token, every line within 78, DKIM verifies; one-click POSTs to either reading unsubscribe', async () => {
    const id = (await d.cli(['campaigns:create', '--subject', 'Spring', '--html', '<p>Hi</p>', '--list', 'readers'])).trim().split('\n')[0];
    assert.match(await d.cli(['notify:send-campaign', id]), /sent 2/);
    const mails = d.sink.messages;
    assert.equal(mails.length, 2);
    const urls = new Map<string, { stripped: string; kept: string }>();
    for (const m of mails) {
      const head = m.raw.toString('latin1').split('\r\n\r\n')[0];
      assert.deepEqual(
        head.split('\r\n').filter((l) => l.length > 78),
        [],
      );
      assert.match(head, new RegExp(`\r\nList-Unsubscribe:\r\n <${LONG_HOST.replace(/\./g, '\\.')}/notify/u/\r\n [A-Za-z0-9_-]{24}>\r\n`));
      const [check] = await verifyDkim(m.raw, { 's1._domainkey.news.example': key.record });
      assert.equal(check.result, 'pass', check.comment);
      assert.ok(check.signed.includes('list-unsubscribe') && check.signed.includes('list-unsubscribe-post'));
      const kept = String((m.parsed.headers.get('list') as { unsubscribe?: { url?: string } }).unsubscribe?.url);
      urls.set(recipient(m), { stripped: listUnsubscribeUrl(m), kept });
      assert.match(kept, / [A-Za-z0-9_-]{24}$/, 'mailparser keeps the space of the fold');
      assert.equal(kept.replace(/\s/g, ''), listUnsubscribeUrl(m));
    }
    const server = await d.serve();
    // the tracking host routes /notify/* here (a proxy in front of `notify serve`): the path as the client asks for it
    const post = (url: string) => fetch(`${server.url}${new URL(url).pathname}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    const ann = await post(urls.get('ann@example.com')!.stripped);
    assert.equal(ann.status, 200);
    assert.match(await ann.text(), /a\*\*@example\.com will not receive/);
    assert.equal(new URL(urls.get('bob@example.com')!.kept).pathname.includes('/notify/u/%20'), true);
    const bob = await post(urls.get('bob@example.com')!.kept);
    assert.equal(bob.status, 200);
    const unsubscribed = await d.cli(['contacts:export', '--status', 'unsubscribed']);
    for (const who of ['ann@example.com', 'bob@example.com']) assert.ok(unsubscribed.includes(who), unsubscribed);
    assert.equal(await server.process.stop(), 0);
  });
});
