// Audience and consent as deployed: `notify serve` configured by notify.config.json (string options)
// with unsubscribeScope 'list', contacts and campaigns made by the CLI, a real SMTP server, and
// the reader's requests over a socket.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { contactStatus, queryRows } from './database.ts';
import { Deployment, describeEachEngine } from './harness.ts';
import { delivered, listUnsubscribeUrl, READER, recipient } from './mail.ts';

const READERS_CSV = ['email,name', 'ann@example.com,Ann', 'bob@example.com,Bob'].join('\n');
const BODY = '<p>Hello {{ contact.name }}</p><p><a href="{notify_unsubscribe_url}">Unsubscribe</a> <a href="{notify_preferences_url}">Preferences</a></p>';

/** The id a `campaigns:create` printed (its first stdout line). */
const campaignId = (stdout: string) => {
  const id = stdout.trim().split('\n')[0];
  assert.match(id, /^\d+$/, `campaigns:create printed ${JSON.stringify(stdout)}`);
  return id;
};

describeEachEngine('as deployed: list-scoped unsubscribe and the preference centre', (engine) => {
  let d: Deployment;
  let server: string;

  before(async () => {
    d = await Deployment.open(engine, { config: { unsubscribeScope: 'list' } });
    server = (await d.serve()).url;
    d.writeFile('readers.csv', READERS_CSV);
    await d.cli(['contacts:import', 'readers.csv', '--list', 'offers']);
    await d.cli(['contacts:import', 'readers.csv', '--list', 'tips']);
  });
  after(() => d?.close());

  /** creates and sends a campaign to a list; the messages it delivered */
  const sendTo = async (list: string, subject: string, expected: number) => {
    const id = campaignId(await d.cli(['campaigns:create', '--subject', subject, '--html', BODY, '--list', list]));
    assert.match(await d.cli(['notify:send-campaign', id]), /nothing remains/);
    return delivered(d.sink, (m) => m.parsed.subject === subject, expected);
  };

  test("a real one-click POST leaves the campaign's list only; the other list's campaign still reaches the reader", async () => {
    const mails = await sendTo('offers', 'Offers 1', 2);
    const ann = mails.find((m) => recipient(m) === 'ann@example.com')!;
    const url = listUnsubscribeUrl(ann);
    assert.ok(url.startsWith(server), `${url} points at the serve process`);
    const res = await fetch(url, { method: 'POST', headers: { ...READER, 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /emails of the list offers/);

    assert.equal(await contactStatus(d.database, 'ann@example.com'), 'subscribed');
    const rows = await queryRows<{ name: string; status: string }>(
      d.database,
      "select l.name, m.status from notify_list_members m join notify_lists l on l.id = m.list_id join notify_contacts c on c.id = m.contact_id where c.email = 'ann@example.com' order by l.name",
    );
    assert.deepEqual(
      rows.map((r) => [r.name, r.status]),
      [
        ['offers', 'unsubscribed'],
        ['tips', 'subscribed'],
      ],
    );

    assert.deepEqual((await sendTo('offers', 'Offers 2', 1)).map(recipient), ['bob@example.com']);
    assert.deepEqual((await sendTo('tips', 'Tips 1', 2)).map(recipient).sort(), ['ann@example.com', 'bob@example.com']);
  });

  test('the preference centre from the email: GET shows the lists and changes nothing, the form POST applies the choices', async () => {
    const [bob] = await sendTo('tips', 'Tips 2', 2).then((ms) => ms.filter((m) => recipient(m) === 'bob@example.com'));
    const url = /href="([^"]*\/notify\/preferences\/[^"]*)"/.exec(String(bob.parsed.html))![1];
    assert.ok(url.startsWith(`${server}/notify/preferences/`), url);
    const members = () =>
      queryRows<{ name: string; status: string }>(
        d.database,
        "select l.name, m.status from notify_list_members m join notify_lists l on l.id = m.list_id join notify_contacts c on c.id = m.contact_id where c.email = 'bob@example.com' order by l.name",
      ).then((rows) => rows.map((r) => `${r.name}:${r.status}`));
    assert.deepEqual(await members(), ['offers:subscribed', 'tips:subscribed']);

    const page = await fetch(url, { headers: READER });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self'/);
    const html = await page.text();
    const boxes = [...html.matchAll(/name="list" value="(\d+)"( checked)?> (\w+)/g)].map((m) => ({ id: m[1], checked: !!m[2], name: m[3] }));
    assert.deepEqual(
      boxes.map((b) => `${b.name}:${b.checked}`),
      ['offers:true', 'tips:true'],
    );
    assert.deepEqual(await members(), ['offers:subscribed', 'tips:subscribed'], 'the GET changed nothing');

    const action = new URL(/<form method="post" action="([^"]+)"/.exec(html)![1], url).href;
    const keep = boxes.find((b) => b.name === 'offers')!.id;
    const saved = await fetch(action, { method: 'POST', headers: { ...READER, 'content-type': 'application/x-www-form-urlencoded' }, body: `list=${keep}&notify_action=save` });
    assert.equal(saved.status, 200);
    assert.match(await saved.text(), /Your choices are saved/);
    assert.deepEqual(await members(), ['offers:subscribed', 'tips:unsubscribed']);
    assert.equal(await contactStatus(d.database, 'bob@example.com'), 'subscribed');

    const bad = await fetch(`${server}/notify/preferences/not-a-token`, { headers: READER });
    assert.equal(bad.status, 404);
  });
});
