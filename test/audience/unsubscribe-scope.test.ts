import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createNotify, type Notify } from '../../src/notify.ts';
import { parseJson } from '../../src/store/rows.ts';
import { listUnsubscribeUrl } from '../e2e/mail.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { reached } from './helpers.ts';

/** Sends the campaign and returns each recipient's List-Unsubscribe URL and body link, by address. */
async function sendAndCollect(n: Notify, sink: SmtpSink, campaignId: number) {
  const start = sink.messages.length;
  const to = await reached(n, sink, campaignId);
  const out = new Map<string, { header: string; link: string }>();
  for (const m of sink.messages.slice(start)) {
    const link = /href="([^"]*\/notify\/unsubscribe\/[^"]*)"/.exec(String(m.parsed.html))![1].replace(/&amp;/g, '&');
    out.set(m.envelope.to[0], { header: listUnsubscribeUrl(m), link });
  }
  assert.equal(out.size, to.length);
  return out;
}

const path = (url: string) => new URL(url).pathname + new URL(url).search;
const HTML = '<p>Hello</p><p><a href="{notify_unsubscribe_url}">Unsubscribe</a></p>';

forEachEngine("unsubscribeScope 'list'", (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  const fired: { email: string; list?: string; source: string }[] = [];
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, unsubscribeScope: 'list' }));
    notify.on('notify:contact.unsubscribed', (p) => {
      fired.push({ email: p.contact.email, list: p.list, source: p.source });
    });
    await notify.lists.create({ name: 'Offers' });
    await notify.lists.create({ name: 'Tips' });
    for (const who of ['ann', 'bob', 'cy']) await notify.contacts.upsert({ email: `${who}@example.com`, lists: ['Offers', 'Tips'] });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test("the one-click POST of a list campaign leaves that list only; another list's campaign still reaches the person", async () => {
    const offers = await notify.campaigns.create({ subject: 'Offer', html: HTML, list: 'Offers' });
    const urls = await sendAndCollect(notify, sink, offers.id);
    const res = await call(notify, path(urls.get('ann@example.com')!.header), { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) });
    assert.equal(res.status, 200);
    const page = await res.text();
    assert.match(page, /will not receive any more emails of the list Offers/);
    assert.match(page, /href="\/notify\/preferences\/[A-Za-z0-9_-]+"/, 'the page links to the preference centre');

    const ann = (await notify.contacts.get('ann@example.com'))!;
    assert.equal(ann.status, 'subscribed', 'the contact is not unsubscribed from everything');
    assert.deepEqual(ann.lists, ['Tips']);
    assert.deepEqual(fired, [{ email: 'ann@example.com', list: 'Offers', source: 'one-click' }]);
    const events = await notify.context.store.db.selectFrom('notify_events').select(['type', 'metadata', 'campaign_id']).where('contact_id', '=', ann.id).execute();
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'unsubscribe');
    assert.equal(Number(events[0].campaign_id), offers.id);
    assert.deepEqual(parseJson(events[0].metadata), { source: 'one-click', list: 'Offers' });

    // a provider's repeated POST, then the body link: nothing more happens
    await call(notify, path(urls.get('ann@example.com')!.header), { method: 'POST' });
    const again = await call(notify, path(urls.get('ann@example.com')!.link));
    assert.match(await again.text(), /had already left the list Offers/);
    assert.equal(fired.length, 1);

    const next = await notify.campaigns.create({ subject: 'Offer 2', html: HTML, list: 'offers' });
    assert.deepEqual(await reached(notify, sink, next.id), ['bob@example.com', 'cy@example.com']);
    const tips = await notify.campaigns.create({ subject: 'Tip', html: HTML, list: 'Tips' });
    assert.deepEqual(await reached(notify, sink, tips.id), ['ann@example.com', 'bob@example.com', 'cy@example.com']);
  });

  test('the link in the body of a list campaign (GET) leaves that list only', async () => {
    const tips = await notify.campaigns.create({ subject: 'Tip 2', html: HTML, list: 'Tips' });
    const urls = await sendAndCollect(notify, sink, tips.id);
    const res = await call(notify, path(urls.get('bob@example.com')!.link));
    assert.equal(res.status, 200);
    const bob = (await notify.contacts.get('bob@example.com'))!;
    assert.equal(bob.status, 'subscribed');
    assert.deepEqual(bob.lists, ['Offers']);
    const stats = await notify.context.store.db.selectFrom('notify_campaign_counters').selectAll().where('campaign_id', '=', tips.id).executeTakeFirst();
    assert.equal(Number(stats?.unsubscribed), 1, "the campaign's unsubscribe counter counts it");
  });

  test('a campaign to everyone, or the link without its send, unsubscribes from everything', async () => {
    const all = await notify.campaigns.create({ subject: 'To all', html: HTML });
    const urls = await sendAndCollect(notify, sink, all.id);
    await call(notify, path(urls.get('cy@example.com')!.header), { method: 'POST' });
    assert.equal((await notify.contacts.get('cy@example.com'))!.status, 'unsubscribed');

    const dee = await notify.contacts.upsert({ email: 'dee@example.com', lists: ['Offers'] });
    const res = await call(notify, `/notify/unsubscribe/${dee.unsubscribe_token}`);
    assert.match(await res.text(), /will not receive any more emails from us/);
    assert.equal((await notify.contacts.get('dee@example.com'))!.status, 'unsubscribed');
  });

  test("another contact's send token does not choose the list: the link acts as 'all'", async () => {
    const eve = await notify.contacts.upsert({ email: 'eve@example.com', lists: ['Offers', 'Tips'] });
    const offers = await notify.campaigns.create({ subject: 'Offer 3', html: HTML, list: 'Offers' });
    const urls = await sendAndCollect(notify, sink, offers.id);
    const bobSend = new URL(urls.get('bob@example.com')!.header).searchParams.get('s');
    await call(notify, `/notify/unsubscribe/${eve.unsubscribe_token}?s=${bobSend}`, { method: 'POST' });
    assert.equal((await notify.contacts.get('eve@example.com'))!.status, 'unsubscribed');
  });
});

forEachEngine("unsubscribeScope 'list' with unsubscribeConfirm", (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, unsubscribeScope: 'list', unsubscribeConfirm: true }));
    await notify.lists.create({ name: 'News' });
    await notify.contacts.upsert({ email: 'ann@example.com', lists: ['News'] });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('GET asks to leave the list and changes nothing; the button leaves it', async () => {
    const news = await notify.campaigns.create({ subject: 'News', html: HTML, list: 'News' });
    const urls = await sendAndCollect(notify, sink, news.id);
    const link = path(urls.get('ann@example.com')!.link);
    const page = await (await call(notify, link)).text();
    assert.match(page, /Leave the list News\?/);
    assert.deepEqual((await notify.contacts.get('ann@example.com'))!.lists, ['News'], 'GET changed nothing');
    const action = /action="([^"]+)"/.exec(page)![1].replace(/&amp;/g, '&');
    await call(notify, action, { method: 'POST', body: new URLSearchParams({ notify_confirm: '1' }) });
    const ann = (await notify.contacts.get('ann@example.com'))!;
    assert.deepEqual([ann.status, ann.lists], ['subscribed', []]);
  });
});

test("unsubscribeScope accepts only 'all' and 'list'", async () => {
  await assert.rejects(createNotify(testOptions('sqlite::memory:', { unsubscribeScope: 'campaign' as never })), /unsubscribeScope.*'all' or 'list'/);
});
