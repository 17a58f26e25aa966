import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ParsedMail } from 'mailparser';
import { manualClock } from '../../src/core/clock.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * What the layout step does to a delivered message, read back from the SMTP sink: one tracking pixel
 * whatever the body and layout hold, whole documents and `layout: false` left unwrapped, and an HTML
 * <title> that says what the Subject header says.
 */

const PIXEL = /<img src="http:\/\/localhost:3000\/notify\/open\/[A-Za-z0-9_-]{22}" width="1" height="1" alt="">/g;
const pixels = (m: ParsedMail) => ((m.html as string).match(PIXEL) ?? []).length;
const count = (html: string, re: RegExp) => (html.match(re) ?? []).length;
/** The shipped layout's card, which a wrapped body sits in. */
const SHIPPED_CARD = /<div class="card"/;

/** The <title> as a browser reads it: text with the HTML escapes undone. */
function title(m: ParsedMail): string {
  const found = /<title>([^<]*)<\/title>/.exec(m.html as string);
  assert.ok(found, 'the HTML part has a <title>');
  return found[1].replace(/&(lt|gt|quot|#34|#39|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', '#34': '"', '#39': "'", amp: '&' })[e]!);
}

forEachEngine('layouts, pixel and title in delivered mail', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  const clock = manualClock();
  const dir = mkdtempSync(join(tmpdir(), 'notify-layout-'));
  /** the newest message the sink holds for an address */
  const lastTo = (address: string): ParsedMail => {
    const found = sink.messages.filter((m) => m.envelope.to.includes(address)).at(-1);
    assert.ok(found, `a message reached ${address}`);
    return found.parsed;
  };

  before(async () => {
    mkdirSync(join(dir, 'views/brand'), { recursive: true });
    writeFileSync(join(dir, 'views/brand/nopixel.liquid'), '<html><body><main id="brand">{{ content | raw }}</main></body></html>');
    writeFileSync(join(dir, 'views/brand/two.liquid'), '<html><body>{notify_tracking_pixel}<main id="two">{{ content | raw }}</main>{notify_tracking_pixel}</body></html>');
    writeFileSync(join(dir, 'views/brand/shout.liquid'), '<html><head><title>{{ subject | upcase }}</title></head><body><h1>{{ subject }}</h1>{{ content | raw }}</body></html>');
    sink = await startSmtpSink();
    notify = await createNotify({ ...testOptions(h.url, { mailer: sink.url, viewsPath: join(dir, 'views') }), clock });
    await notify.contacts.upsert({ email: 'chloe@example.com', name: 'Chloe', lists: ['spring'] });
    await notify.contacts.upsert({ email: 'dan@example.com', name: 'Dan <& "Sons">', lists: ['spring'] });
  });
  after(async () => {
    await notify.close();
    await sink.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a body that places the pixel inside the default layout gets that one pixel, where the body put it', async () => {
    await notify.send({ to: 'chloe@example.com', subject: 'Pixel', html: '<p id="before">Hi</p>{notify_tracking_pixel}<p id="after">Bye</p>' });
    const m = lastTo('chloe@example.com');
    assert.equal(pixels(m), 1, 'one <img> of /notify/open/ in the HTML part');
    assert.match(m.html as string, /id="before"[\s\S]*<img src="[^"]*\/notify\/open\/[\s\S]*id="after"/, 'the pixel is where the body placed it');
    assert.match(m.html as string, SHIPPED_CARD, 'still inside the default layout');
  });

  test('one pixel whatever the count: body twice, layout twice, neither', async () => {
    await notify.send({ to: 'chloe@example.com', subject: 'x', html: '<p>a</p>{notify_tracking_pixel}<p>b</p>{notify_tracking_pixel}' });
    assert.equal(pixels(lastTo('chloe@example.com')), 1, 'body places it twice');
    await notify.send({ to: 'chloe@example.com', subject: 'x', html: '<p>two</p>', layout: 'brand/two' });
    let m = lastTo('chloe@example.com');
    assert.match(m.html as string, /id="two"/);
    assert.equal(pixels(m), 1, 'layout places it twice');
    await notify.send({ to: 'chloe@example.com', subject: 'x', html: '<p>b</p>{notify_tracking_pixel}', layout: 'brand/two' });
    assert.equal(pixels(lastTo('chloe@example.com')), 1, 'body once and layout twice');
    await notify.send({ to: 'chloe@example.com', subject: 'x', html: '<p>none</p>', layout: 'brand/nopixel' });
    m = lastTo('chloe@example.com');
    assert.equal(pixels(m), 1, 'neither: one is added');
    assert.match(m.html as string, /<\/main><img src="[^"]*\/notify\/open\/[^"]*" width="1" height="1" alt=""><\/body>/, 'added before </body>');
    await notify.send({ to: 'chloe@example.com', subject: 'x', html: '<p>plain</p>' });
    assert.equal(pixels(lastTo('chloe@example.com')), 1, 'the shipped layout places one');
  });

  test('a campaign whose body places the pixel: one pixel for each recipient', async () => {
    const c = await notify.campaigns.create({ subject: 'Spring', list: 'spring', markdown: 'Hello {{ contact.name }}\n\n{notify_tracking_pixel}\n\n[More](https://example.com/more)' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 2);
    for (const to of ['chloe@example.com', 'dan@example.com']) assert.equal(pixels(lastTo(to)), 1, to);
  });

  test('a body that is a whole HTML document is not wrapped in the layout', async () => {
    const doc = '<!DOCTYPE html>\n<html><head><title>My own</title></head><body><p id="doc">Doc</p><a href="{notify_unsubscribe_url}">out</a></body></html>';
    await notify.send({ to: 'chloe@example.com', subject: 'Doc', html: doc });
    const html = lastTo('chloe@example.com').html as string;
    assert.equal(count(html, /<!doctype/gi), 1, 'one doctype');
    assert.equal(count(html, /<body[\s>]/gi), 1, 'one <body>');
    assert.equal(count(html, /<title>/gi), 1, 'one <title>');
    assert.doesNotMatch(html, SHIPPED_CARD);
    assert.match(html, /<title>My own<\/title>/);
    assert.match(html, /<p id="doc">Doc<\/p>/);
    assert.match(html, /<img src="[^"]*\/notify\/open\/[^"]*" width="1" height="1" alt=""><\/body>/, 'the pixel goes before its </body>');
    assert.equal(count(html, PIXEL), 1);
    await notify.send({ to: 'chloe@example.com', subject: 'Doc', html: '<html lang="fr"><body><p id="nodoctype">x</p></body></html>' });
    const bare = lastTo('chloe@example.com').html as string;
    assert.match(bare, /id="nodoctype"/);
    assert.equal(count(bare, /<html[\s>]/gi), 1, '<html> without a doctype is a document too');
    assert.doesNotMatch(bare, SHIPPED_CARD);
  });

  test('layout: false on a send, a campaign and a drip step: the body alone, one pixel', async () => {
    const body = '<p id="bare">Bare {{ contact.name }}</p><a href="{notify_unsubscribe_url}">out</a>';
    const bareOk = (m: ParsedMail, what: string) => {
      const html = m.html as string;
      assert.match(html, /<p id="bare">Bare /, what);
      assert.doesNotMatch(html, SHIPPED_CARD, `${what}: no layout`);
      assert.doesNotMatch(html, /<!doctype|<title>/i, `${what}: nothing of the layout's head`);
      assert.equal(count(html, PIXEL), 1, `${what}: one pixel`);
    };
    await notify.send({ to: 'chloe@example.com', subject: 'Bare', html: body, layout: false });
    bareOk(lastTo('chloe@example.com'), 'send');

    const c = await notify.campaigns.create({ subject: 'Bare campaign', list: 'spring', html: body, layout: false });
    assert.equal(c.layout, false, 'create returns layout false');
    assert.equal((await notify.campaigns.get(c.id))?.layout, false, 'stored and read back as false');
    assert.equal((await notify.campaigns.send(c.id)).sent, 2);
    bareOk(lastTo('dan@example.com'), 'campaign');

    const seq = await notify.drips.createSequence({ name: 'bare-steps', steps: [{ delayMinutes: 0, subject: 'Step', html: body, layout: false }] });
    assert.equal(seq.steps[0].layout, false);
    await notify.drips.enroll({ contact: 'chloe@example.com', sequence: 'bare-steps' });
    assert.equal((await notify.drips.process()).sent, 1);
    bareOk(lastTo('chloe@example.com'), 'drip step');

    const wrapped = await notify.campaigns.create({ subject: 'Wrapped', list: 'spring', html: body });
    assert.equal(wrapped.layout, null, 'no layout given: null, the defaultLayout');
    await notify.campaigns.send(wrapped.id);
    assert.match(lastTo('dan@example.com').html as string, SHIPPED_CARD, 'without layout: false the default layout wraps');
  });

  test('the <title> is the personalised subject, HTML-escaped, for every recipient of one compile', async () => {
    await notify.send({ to: 'chloe@example.com', subject: 'Spring news for {{ contact.name }}', html: '<p>Hi</p>' });
    let m = lastTo('chloe@example.com');
    assert.equal(m.subject, 'Spring news for Chloe');
    assert.equal(title(m), m.subject);
    const c = await notify.campaigns.create({ subject: 'Spring news for {{ contact.name }}', list: 'spring', html: '<p>Hi {{ contact.name }}</p>' });
    await notify.campaigns.send(c.id);
    for (const [to, name] of [
      ['chloe@example.com', 'Chloe'],
      ['dan@example.com', 'Dan <& "Sons">'],
    ]) {
      m = lastTo(to);
      assert.equal(m.subject, `Spring news for ${name}`);
      assert.equal(title(m), m.subject, `${to}: <title> equals the Subject header`);
    }
    assert.match(m.html as string, /<title>Spring news for Dan &lt;&amp; &(quot|#34);Sons&(quot|#34);&gt;<\/title>/, 'escaped in the markup');
    assert.doesNotMatch(m.text as string, /Spring news/, 'the title stays out of the text part');
  });

  test('a layout that filters or repeats the subject gets it personalised too', async () => {
    await notify.send({ to: 'dan@example.com', subject: 'Hello {{ contact.name }}', html: '<p>x</p>', layout: 'brand/shout' });
    const m = lastTo('dan@example.com');
    assert.equal(title(m), 'HELLO DAN <& "SONS">');
    assert.match(m.html as string, /<h1>Hello Dan &lt;&amp; &(quot|#34);Sons&(quot|#34);&gt;<\/h1>/);
    assert.match(m.text as string, /Hello Dan <& "Sons">/, 'the text part has it unescaped');
  });

  test('bad layout values are clear errors and nothing is stored or sent', async () => {
    const before = sink.messages.length;
    for (const layout of [true, 42, {}, '../../etc/passwd', 'no/such/layout']) {
      const code = layout === 'no/such/layout' ? 'NOT_FOUND' : 'INVALID_INPUT';
      await assert.rejects(notify.campaigns.create({ subject: 's', html: 'x', layout: layout as never }), (e) => isNotifyError(e, code), `campaign ${JSON.stringify(layout)}`);
      await assert.rejects(notify.drips.createSequence({ name: `bad-${String(layout)}`, steps: [{ delayMinutes: 0, subject: 's', html: 'x', layout: layout as never }] }), (e) => isNotifyError(e, code), `step ${JSON.stringify(layout)}`);
      await assert.rejects(notify.send({ to: 'chloe@example.com', subject: 's', html: 'x', layout: layout as never }), (e) => isNotifyError(e, code), `send ${JSON.stringify(layout)}`);
    }
    assert.equal(sink.messages.length, before, 'nothing was sent');
    assert.equal(await notify.drips.getSequence('bad-true'), undefined, 'no sequence stored');
  });
});
