// notify's own SMTP client as deployed: a mail server that requires STARTTLS (self-signed
// certificate) and AUTH, configured only by the `mailer` URL and `smtpName` in notify.config.json.
// The CLI sends a campaign whose body has lines that begin with dots; every reader gets it over TLS,
// authenticated, with the EHLO name configured and the dots as written. A wrong password fails the
// sends permanently (535) and nothing arrives.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine } from './harness.ts';

const CSV = ['email,name', 'ann@example.com,Ann', 'bo@example.com,Bo', 'cy@example.com,Cy'].join('\n');
const AUTH = { user: 'sender@example.com', pass: 'p@ss wörd' };
const TEXT = '.first line starts with a dot\n\n..two dots\n.\nHello {{ contact.name }}';

describeEachEngine('as deployed: SMTP over STARTTLS with AUTH', (engine) => {
  let d: Deployment;
  before(async () => {
    d = await Deployment.open(engine, { sink: { tls: true, auth: AUTH }, config: { smtpName: 'mail.news.example' } });
    d.writeFile('readers.csv', CSV);
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
  });
  after(() => d?.close());

  test('a campaign reaches every reader over TLS, authenticated, with the EHLO name and its dots intact', async () => {
    const id = (await d.cli(['campaigns:create', '--subject', 'Dotted', '--text', TEXT, '--list', 'readers'])).trim().split('\n')[0];
    const run = await d.cli(['notify:send-campaign', id]);
    assert.match(run, /sent 3, failed 0/);
    const got = d.sink.messages.filter((m) => m.parsed.subject === 'Dotted');
    assert.deepEqual(got.map((m) => m.envelope.to[0]).sort(), ['ann@example.com', 'bo@example.com', 'cy@example.com']);
    for (const m of got) {
      assert.equal(m.secure, true, 'STARTTLS');
      assert.equal(m.user, AUTH.user);
      assert.equal(m.ehlo, 'mail.news.example');
      const name = { 'ann@example.com': 'Ann', 'bo@example.com': 'Bo', 'cy@example.com': 'Cy' }[m.envelope.to[0]];
      assert.equal(m.parsed.text?.trim(), `.first line starts with a dot\n\n..two dots\n.\nHello ${name}`);
    }
  });

  test('a wrong password: every send failed at once with the 535 as the reason, nothing arrives', async () => {
    const before = d.sink.messages.length;
    const url = new URL(d.sink.url);
    url.password = 'wrong';
    d.writeConfig('notify.config.json', { ...d.defaults(), mailer: url.href, smtpName: 'mail.news.example' });
    const id = (await d.cli(['campaigns:create', '--subject', 'Refused', '--text', 'x', '--list', 'readers'])).trim().split('\n')[0];
    const run = await d.run(['notify:send-campaign', id]);
    assert.equal(run.code, 1, 'a run in which every send failed exits non-zero');
    assert.match(run.stdout, /sent 0, failed 3/);
    assert.match(run.stderr, /answered AUTH with 535 5\.7\.8 authentication failed \(sendId: \d+, transient: false\)/);
    const rows = await queryRows<{ status: string; error: string }>(d.database, 'select status, error from notify_sends where campaign_id = ?', [Number(id)]);
    assert.deepEqual(
      rows.map((r) => r.status),
      ['failed', 'failed', 'failed'],
      'failed at once, not deferred',
    );
    for (const r of rows) assert.match(r.error, /535 5\.7\.8 authentication failed/);
    assert.equal(d.sink.messages.length, before);
  });
});
