import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import type { NotifyEventName } from '../../src/core/events.ts';
import { hashToken, newToken } from '../../src/core/tokens.ts';
import { LABELS_SETTLE_MS } from '../../src/store/outbox.ts';
import { dripWorld, type DripWorld } from '../drips/helpers.ts';
import { ENGINES } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { startReceiver } from './receiver.ts';

const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

for (const engine of ENGINES) {
  let w: DripWorld;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const heard: { type: string; data: Record<string, unknown> }[] = [];
  before(async () => {
    receiver = await startReceiver();
    w = await dripWorld(engine, { webhooksOut: [{ url: receiver.url, secret: 'whsec_test' }] });
    for (const type of ['notify:contact.subscribed', 'notify:contact.confirmed', 'notify:email.sent', 'notify:email.failed', 'notify:email.opened', 'notify:email.clicked', 'notify:campaign.sent'] as NotifyEventName[]) {
      w.notify.on(type, (data) => void heard.push({ type, data: data as Record<string, unknown> }));
    }
  });
  after(async () => {
    await w.close();
    await receiver.close();
  });

  test(`[${engine}] every event of a flow is heard in-process and delivered signed, each once, with the same payload`, async () => {
    const n = w.notify;
    await n.contacts.upsert({ email: 'ann@example.com', lists: ['news'] });
    const token = newToken();
    await createContactsService(n.context).upsert({ email: 'pat@example.com', lists: ['news'] }, { initialStatus: 'pending', confirmation: { tokenHash: hashToken(token), at: w.clock.now() } });
    const pat = (await n.contacts.get('pat@example.com'))!;
    await n.context.store.optin.confirm(pat.id, hashToken(token), ['pending'], { at: w.clock.now(), ip: null });
    const campaign = await n.campaigns.create({ subject: 'Launch', html: '<p>Hi <a href="https://example.com/x">x</a></p>', list: 'news' });
    w.mailer.fail = null;
    const run = await n.campaigns.send(campaign.id);
    assert.equal(run.sent, 2);
    w.mailer.fail = 'throw';
    await n.send({ to: 'zed@example.com', subject: 'one-off', html: '<p>x</p>' });
    w.mailer.fail = null;
    const message = w.mailer.messages.find((m) => m.subject === 'Launch')!;
    const html = message.html ?? message.raw?.toString('utf8') ?? '';
    const click = /http:\/\/localhost:3000(\/notify\/click\/[^"\s]+)/.exec(html.replace(/=\r?\n/g, '').replace(/=3D/g, '='))![1].replace(/&amp;/g, '&');
    w.clock.advance(10 * 60_000); // a person reads later; a click seconds after delivery is a scanner's
    await call(n, `/notify/open/${message.sendToken}`, { headers: { 'user-agent': BROWSER } });
    await call(n, `/notify/open/${message.sendToken}`, { headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' } });
    assert.equal((await call(n, click, { headers: { 'user-agent': BROWSER } })).status, 302);
    await n.flush();

    const types = heard.map((h) => h.type).sort();
    assert.deepEqual(types, [
      'notify:campaign.sent',
      'notify:contact.confirmed',
      'notify:contact.subscribed',
      'notify:contact.subscribed',
      'notify:email.clicked',
      'notify:email.failed',
      'notify:email.opened',
      'notify:email.opened',
      'notify:email.sent',
      'notify:email.sent',
    ]);
    const opened = heard.filter((h) => h.type === 'notify:email.opened').map((h) => h.data);
    assert.deepEqual(opened[0], { send: { id: (opened[0].send as { id: number }).id, campaign_id: campaign.id, contact_id: (await n.contacts.get(message.to[0]))!.id }, at: new Date(w.clock.now()).toISOString(), isMachine: false, machineReason: null });
    assert.deepEqual([opened[1].isMachine, opened[1].machineReason], [true, 'google_image_proxy'], 'the proxy fetch is labelled a machine, with why');
    const clicked = heard.find((h) => h.type === 'notify:email.clicked')!.data;
    assert.deepEqual([clicked.link_index, clicked.isMachine, clicked.machineReason], [0, false, null]);
    const failed = heard.find((h) => h.type === 'notify:email.failed')!.data;
    assert.equal(failed.email, 'zed@example.com');
    assert.match(String(failed.error), /connection refused/);
    const campaignSent = heard.find((h) => h.type === 'notify:campaign.sent')!.data;
    assert.deepEqual(campaignSent, { campaign: { id: campaign.id, name: null, subject: 'Launch' }, sent: 2, failed: 0, suppressed: 0 });

    w.clock.advance(LABELS_SETTLE_MS); // the click's label is final
    const r = await n.events.deliver();
    assert.equal(r.delivered, heard.length);
    assert.equal(receiver.received.length, heard.length);
    assert.equal(new Set(receiver.received.map((e) => e.id)).size, heard.length, 'one id an event');
    for (const got of receiver.received) {
      assert.ok(n.events.verify(got.body, got.signature, 'whsec_test', { now: w.clock.now() }), 'signed with the secret at the clock time');
      assert.match(got.id, /^evt_/);
    }
    assert.deepEqual(
      receiver.received.map((e) => JSON.stringify([e.type, e.data])).sort(),
      heard.map((h) => JSON.stringify([h.type, h.data])).sort(),
      'the webhook carries what listeners heard',
    );
    assert.equal((await n.events.deliver()).delivered, 0, 'nothing delivered twice');
  });
}
