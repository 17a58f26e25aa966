// trackOpens / trackClicks off (globally, per campaign, per send) and layout: false, read back from
// messages a real SMTP server received: every URL of the html and text parts is listed and checked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ParsedMail } from 'mailparser';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const HOST = 'http://localhost:3000';
const SHOP = 'https://shop.example/spring?utm=1';
const BODY = `<p>Hi {{ contact.name }}, see <a href="${SHOP}">the shop</a> or https://docs.example/guide.</p>`;

/** every http(s) URL in the html part (attribute values and text) and in the text part */
function urls(m: ParsedMail): string[] {
  const all = `${m.html || ''}\n${m.text || ''}`.replace(/&amp;/g, '&');
  return (all.match(/https?:\/\/[^\s"'<>)\]]+/g) ?? []).map((u) => u.replace(/[.,]$/, ''));
}
const notifyUrls = (m: ParsedMail) => urls(m).filter((u) => u.startsWith(HOST));
/** the body's long link, or the header's short one */
const isUnsubscribe = (u: string) => /^http:\/\/localhost:3000\/notify\/(unsubscribe\/[A-Za-z0-9_-]{22}\?s=[A-Za-z0-9_-]{22}|u\/[A-Za-z0-9_-]{24})$/.test(u);
/** the List-Unsubscribe URL as mailparser reads it */
const listUnsubscribe = (m: ParsedMail) => String((m.headers.get('list') as { unsubscribe?: { url?: string } } | undefined)?.unsubscribe?.url);
const hasPixel = (m: ParsedMail) => /\/notify\/open\//.test(String(m.html));
const hasClick = (m: ParsedMail) => urls(m).some((u) => u.includes('/notify/click/'));

forEachEngine('tracking off', (h) => {
  let sink: SmtpSink;
  let off: Notify;
  let on: Notify;
  const to = (address: string) => {
    const found = sink.messages.filter((m) => m.envelope.to.includes(address)).at(-1);
    assert.ok(found, `a message reached ${address}`);
    return found.parsed;
  };

  before(async () => {
    sink = await startSmtpSink();
    // the options as strings, as a .env file or the environment gives them
    off = await createNotify({ ...testOptions(h.url, { mailer: sink.url }), env: { NOTIFY_TRACK_OPENS: 'false', NOTIFY_TRACK_CLICKS: 'false' } });
    on = await createNotify(testOptions(h.url, { mailer: sink.url }));
  });
  after(async () => {
    await off?.close();
    await on?.close();
    await sink?.close();
  });

  test('both options off: campaign, drip step and send hold no notify URL but the unsubscribe link', async () => {
    assert.equal(off.config.trackOpens, false);
    assert.equal(off.config.trackClicks, false);
    await off.contacts.upsert({ email: 'ann@example.com', name: 'Ann' });
    const campaign = await off.campaigns.create({ subject: 'Spring', html: BODY });
    assert.equal((await off.campaigns.send(campaign.id)).sent, 1);
    await off.drips.createSequence({ name: 'quiet', steps: [{ delayMinutes: 0, subject: 'Step one', markdown: `Hello, see [the shop](${SHOP})` }] });
    await off.drips.enroll({ contact: 'ann@example.com', sequence: 'quiet' });
    assert.equal((await off.drips.process()).sent, 1);
    await off.send({ to: 'bob@example.com', subject: 'One-off', html: BODY });

    for (const subject of ['Spring', 'Step one', 'One-off']) {
      const m = sink.messages.find((x) => x.parsed.subject === subject)!.parsed;
      const mine = notifyUrls(m);
      assert.ok(mine.length >= 1, `${subject}: the unsubscribe link is kept`);
      for (const u of mine) assert.ok(isUnsubscribe(u), `${subject}: only unsubscribe links point at notify, found ${u}`);
      assert.ok(urls(m).includes(SHOP), `${subject}: the shop link goes straight to the shop`);
      assert.equal(hasPixel(m), false, `${subject}: no pixel`);
      assert.ok(isUnsubscribe(listUnsubscribe(m)), `${subject}: List-Unsubscribe stays`);
    }
    // the bare URL of the text in the html's prose is not a link, but the text part's copy of it is untouched too
    assert.ok(urls(to('bob@example.com')).includes('https://docs.example/guide'));
  });

  test('per campaign: stored, read back, and each switch works alone; null follows the option', async () => {
    await on.contacts.upsert({ email: 'cy@example.com', name: 'Cy' });
    const noPixel = await on.campaigns.create({ subject: 'No pixel', html: BODY, trackOpens: false });
    assert.equal(noPixel.track_opens, false);
    assert.equal(noPixel.track_clicks, null);
    assert.equal((await on.campaigns.get(noPixel.id))?.track_opens, false);
    await on.campaigns.send(noPixel.id);
    const a = to('cy@example.com');
    assert.equal(hasPixel(a), false);
    assert.equal(hasClick(a), true, 'clicks still tracked');

    const noClicks = await on.campaigns.create({ subject: 'No clicks', html: BODY, trackClicks: false });
    await on.campaigns.send(noClicks.id);
    const b = to('cy@example.com');
    assert.equal(hasPixel(b), true, 'the pixel is still there');
    assert.equal(hasClick(b), false);
    assert.ok(urls(b).includes(SHOP));

    // a campaign that chose overrides the option; one that did not follows it
    const dave = 'dave@example.com';
    await off.contacts.upsert({ email: dave });
    const tracked = await off.campaigns.create({ subject: 'Tracked anyway', html: BODY, trackOpens: true, trackClicks: true });
    await off.campaigns.send(tracked.id);
    assert.equal(hasPixel(to(dave)), true);
    assert.equal(hasClick(to(dave)), true);

    const updated = await on.campaigns.create({ subject: 'Later off', html: BODY });
    assert.equal(updated.track_opens, null);
    assert.equal((await on.campaigns.update(updated.id, { trackOpens: false, trackClicks: false })).track_clicks, false);
    assert.equal((await on.campaigns.update(updated.id, { subject: 'Later off!' })).track_opens, false, 'an update that does not name it keeps it');
  });

  test('per send, and layout: false on a send and a campaign', async () => {
    await on.send({ to: 'eve@example.com', subject: 'Quiet send', html: BODY, trackOpens: false, trackClicks: false, layout: false });
    const m = to('eve@example.com');
    assert.equal(hasPixel(m), false);
    for (const u of notifyUrls(m)) assert.ok(isUnsubscribe(u), `only unsubscribe links, found ${u}`);
    assert.doesNotMatch(String(m.html), /class="card"/, 'no layout around the body');

    await on.contacts.upsert({ email: 'fay@example.com' });
    const bare = await on.campaigns.create({ subject: 'Bare', html: BODY, layout: false, trackOpens: false, trackClicks: false });
    await on.campaigns.send(bare.id);
    const c = to('fay@example.com');
    assert.doesNotMatch(String(c.html), /class="card"/);
    // no layout and no {notify_unsubscribe_url} in the body: not one notify URL in the body at all
    assert.deepEqual(notifyUrls(c), []);
    assert.ok(isUnsubscribe(listUnsubscribe(c)), 'the unsubscribe header is still there');
  });

  test('a test copy of a campaign with tracking off has no pixel and direct links', async () => {
    const quiet = await on.campaigns.create({ subject: 'Quiet test', html: BODY, trackOpens: false, trackClicks: false });
    const res = await on.campaigns.sendTest(quiet.id, { to: ['gil@example.com'] });
    assert.deepEqual(res.sent, ['gil@example.com']);
    const m = to('gil@example.com');
    assert.equal(hasPixel(m), false);
    assert.equal(hasClick(m), false);
  });
});

describe('tracking options: bad inputs', () => {
  test('trackOpens that is not a yes/no: CONFIG_INVALID naming it', async () => {
    await assert.rejects(createNotify(testOptions('sqlite::memory:', { trackOpens: 'sometimes' as never })), (err) => isNotifyError(err, 'CONFIG_INVALID') && /'trackOpens'/.test(err.message));
  });

  test('a campaign or send with trackClicks "no" (a string): INVALID_INPUT, nothing stored', async () => {
    const notify = await createNotify(testOptions('sqlite::memory:'));
    try {
      await assert.rejects(notify.campaigns.create({ subject: 'x', html: '<p>x</p>', trackClicks: 'no' as never }), (err) => isNotifyError(err, 'INVALID_INPUT') && err.details?.field === 'trackClicks');
      assert.deepEqual(await notify.campaigns.list(), []);
      await assert.rejects(notify.send({ to: 'a@example.com', subject: 'x', html: '<p>x</p>', trackOpens: 0 as never }), (err) => isNotifyError(err, 'INVALID_INPUT') && err.details?.field === 'trackOpens');
    } finally {
      await notify.close();
    }
  });
});
