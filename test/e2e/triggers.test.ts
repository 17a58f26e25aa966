// Triggers and outgoing webhooks as deployed: `notify serve` and `notify worker` as separate
// processes configured by a .env file (webhooksOut as JSON text), a sequence created through the
// JSON API with a listJoined trigger, a sign-up through the capture form, the welcome email at a
// real SMTP server, and every event POSTed, signed, to a receiver on a socket; a mail client's
// one-click unsubscribe and a provider's signed bounce (Mailgun's HMAC) reach the receiver likewise.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { events } from '../../src/index.ts';
import { startReceiver } from '../triggers/receiver.ts';
import { Deployment, describeEachEngine, waitUntil } from './harness.ts';
import { delivered, listUnsubscribeUrl, pixelUrl, READER } from './mail.ts';
import { providerRigs } from './webhook-requests.ts';

const SECRET = 'whsec_e2e_secret';
const mailgun = providerRigs().mailgun;

describeEachEngine('as deployed: a list join starts a sequence and the worker delivers signed webhooks', (engine) => {
  let d: Deployment;
  let server: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver();
    const hooks = JSON.stringify([{ url: receiver.url, secret: SECRET }]);
    d = await Deployment.open(engine, { config: { adminToken: 'e2e-admin-token-0123456789', captureLists: 'news', ...mailgun.config }, envFile: `NOTIFY_WEBHOOKS_OUT='${hooks}'\n` });
    server = (await d.serve()).url;
    await d.worker(0.3);
  });
  after(async () => {
    await d?.close();
    await receiver?.close();
  });

  test('capture -> enrolled -> welcome email -> open; the receiver gets each event signed, once each', async () => {
    const created = await fetch(`${server}/notify/api/v1/sequences`, {
      method: 'POST',
      headers: { authorization: 'Bearer e2e-admin-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'welcome', trigger: { listJoined: 'news' }, steps: [{ delayMinutes: 0, subject: 'Welcome aboard', html: '<p>Hello</p>' }] }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    assert.deepEqual((await created.json()).trigger, { listJoined: 'news' });

    const signup = await fetch(`${server}/notify/capture`, {
      method: 'POST',
      headers: { ...READER, accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=newbie%40example.com&list=news',
    });
    assert.equal(signup.status, 200, await signup.clone().text());

    const [welcome] = await delivered(d.sink, (m) => m.parsed.subject === 'Welcome aboard', 1, 30_000).catch((err) => assert.fail(`${err.message}\n${d.describe()}`));
    assert.equal(welcome.envelope.to[0], 'newbie@example.com');
    const pixel = await fetch(pixelUrl(welcome), { headers: READER });
    assert.equal(pixel.status, 200);

    const want = ['notify:contact.subscribed', 'notify:email.sent', 'notify:email.opened'];
    await waitUntil(() => want.every((t) => receiver.received.some((e) => e.type === t)) || undefined, 30_000, 'the three events at the receiver').catch((err) =>
      assert.fail(`${err.message}: got ${JSON.stringify(receiver.received.map((e) => e.type))}\n${d.describe()}`),
    );
    for (const e of receiver.received) assert.ok(events.verify(e.body, e.signature, SECRET), `signed: ${e.type}`);
    assert.equal(new Set(receiver.received.map((e) => e.id)).size, receiver.received.length, 'no id twice');
    const subscribed = receiver.received.find((e) => e.type === 'notify:contact.subscribed')!;
    assert.deepEqual(subscribed.data, { contact: { id: (subscribed.data.contact as { id: number }).id, email: 'newbie@example.com' }, list: 'news' });
    const opened = receiver.received.find((e) => e.type === 'notify:email.opened')!;
    assert.equal(opened.data.isMachine, false);
    // the worker logs its run once every delivery of it is recorded, a moment after the receiver's answers
    await waitUntil(() => /webhooks: \d+ delivered/.test(d.describe()) || undefined, 15_000, 'the worker reports its deliveries').catch((err) => assert.fail(`${err.message}\n${d.describe()}`));
  });

  test("a mail client's one-click unsubscribe and a provider's signed bounce arrive as signed notify:contact.unsubscribed and notify:contact.bounced", async () => {
    d.writeFile('leavers.csv', ['email', 'leaver@example.com', 'bouncer@example.com'].join('\n'));
    await d.cli(['contacts:import', 'leavers.csv', '--list', 'leavers']);
    const id = (await d.cli(['campaigns:create', '--subject', 'Last call', '--html', '<p>Hi</p>', '--list', 'leavers'])).trim().split('\n')[0];
    // the worker runs every `sending` campaign each round too, so either process may deliver a send:
    // what counts is that both arrive, once each (delivered below), and that nothing failed
    assert.match(await d.cli(['notify:send-campaign', id]), /failed 0/);
    const [mail] = await delivered(d.sink, (m) => m.parsed.subject === 'Last call' && m.envelope.to[0] === 'leaver@example.com', 1);
    const oneClick = await fetch(listUnsubscribeUrl(mail).replace(/^https?:\/\/[^/]+/, server), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(oneClick.status, 200);
    const forged = await fetch(`${server}/notify/webhook`, mailgun.forged('bouncer@example.com'));
    assert.equal(forged.status, 403, 'a forged bounce changes nothing and announces nothing');
    const bounce = await fetch(`${server}/notify/webhook`, mailgun.bounce('bouncer@example.com'));
    assert.equal(bounce.status, 200, await bounce.clone().text());

    const of = (type: string) => receiver.received.filter((e) => e.type === type);
    await waitUntil(() => (of('notify:contact.unsubscribed').length > 0 && of('notify:contact.bounced').length > 0) || undefined, 30_000, 'both events at the receiver').catch((err) =>
      assert.fail(`${err.message}: got ${JSON.stringify(receiver.received.map((e) => e.type))}\n${d.describe()}`),
    );
    const [unsubscribed] = of('notify:contact.unsubscribed');
    const [bounced] = of('notify:contact.bounced');
    for (const e of [unsubscribed, bounced]) assert.ok(events.verify(e.body, e.signature, SECRET), `signed: ${e.type}`);
    const contact = unsubscribed.data.contact as { id: number; email: string };
    assert.deepEqual(unsubscribed.data, { contact: { id: contact.id, email: 'leaver@example.com' }, source: 'one-click', sendId: unsubscribed.data.sendId });
    assert.equal(typeof unsubscribed.data.sendId, 'number', 'the send whose List-Unsubscribe was used');
    assert.equal((bounced.data.contact as { email: string }).email, 'bouncer@example.com');
    assert.equal(bounced.data.provider, 'mailgun');
    assert.ok(!/unsubscribe_token|attributes/.test(unsubscribed.body + bounced.body), 'no token or attributes leave the process');
    assert.equal(of('notify:contact.bounced').length, 1, 'the forged one wrote nothing');
  });
});
