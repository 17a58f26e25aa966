import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { isNotifyError } from '../../src/errors.ts';
import type { Notify } from '../../src/notify.ts';
import { createNotify } from '../../src/notify.ts';
import { LinkCollector, markHtml, markText, PIXEL_PLACEHOLDER, UNSUB_PLACEHOLDER } from '../../src/render/tracking-rewrite.ts';
import { recordingMailer } from '../capture/helpers.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { fuzzParams, hostileString, MARKER } from './helpers/fuzz.ts';

/**
 * The link rewriter under fuzzing: whatever the markup around them, exactly the http(s) hrefs are
 * collected (in order, once each), every other href is left as it was, and in a delivered message
 * each click link redirects only to a URL the message itself held.
 */

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

const pathPart = fc.stringMatching(/^[A-Za-z0-9/_.~%-]{0,20}$/);
const trackable = fc.tuple(fc.constantFrom('http', 'https', 'HTTP', 'Https'), fc.constantFrom('example.com', 'a.example.org', 'xn--bcher-kva.example', '127.0.0.1:8080'), pathPart, fc.option(fc.constantFrom('?q=1&r=2', '?x=<y>', '#frag', '?u="quoted"'), { nil: '' })).map(([scheme, host, path, rest]) => `${scheme}://${host}/${path}${rest}`);
const untracked = fc.constantFrom('mailto:someone@example.com', 'tel:+15551234', UNSUB_PLACEHOLDER, '/relative/path', '#top', 'javascript:alert(1)', 'ftp://example.com/f', '//evil.example/x', 'data:text/html,hi', '');

interface Anchor {
  href: string;
  quote: '"' | "'" | '';
  text: string;
  extra: string;
}
const anchor: fc.Arbitrary<Anchor> = fc.record({
  href: fc.oneof(trackable, untracked),
  quote: fc.constantFrom<'"' | "'" | ''>('"', "'", ''),
  text: hostileString(40),
  extra: fc.constantFrom('', ' class="btn"', ' data-x=\'a>b\'', ' title="1 > 0"', ' target=_blank'),
});

function anchorHtml(a: Anchor): string {
  const q = a.quote === '' && (a.href === '' || /[\s"'>`=<&]/.test(a.href)) ? '"' : a.quote;
  const value = q === '"' ? escapeAttr(a.href) : q === "'" ? a.href.replace(/&/g, '&amp;').replace(/'/g, '&#39;') : a.href;
  return `<a${a.extra} href=${q}${value}${q}>${escapeText(a.text)}</a>`;
}

describe('link rewriter under fuzzing', () => {
  test('markHtml collects exactly the http(s) hrefs, in order, once each; other hrefs stay byte for byte', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(hostileString(60), anchor), { maxLength: 12 }), fc.boolean(), (pieces, withPixel) => {
        const html = pieces.map(([text, a]) => escapeText(text) + anchorHtml(a)).join('') + (withPixel ? PIXEL_PLACEHOLDER : '');
        const links = new LinkCollector();
        const marked = markHtml(html, links);
        const expected = [...new Set(pieces.map(([, a]) => a.href).filter((h) => /^https?:\/\//i.test(h)))];
        assert.deepEqual(links.urls, expected);
        for (const [, a] of pieces) {
          if (/^https?:\/\//i.test(a.href) || a.href === UNSUB_PLACEHOLDER || a.href === '') continue;
          assert.ok(marked.includes(a.href.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/"/g, '&quot;')) || marked.includes(a.href), `untracked href ${a.href} kept`);
        }
        assert.ok(!marked.includes(UNSUB_PLACEHOLDER) && !marked.includes(PIXEL_PLACEHOLDER), 'placeholders are all replaced by markers');
      }),
      fuzzParams(1000),
    );
  });

  test('markHtml and markText never throw on arbitrary text, and collect only http(s) URLs the input held', () => {
    fc.assert(
      fc.property(fc.oneof(hostileString(400), fc.string({ maxLength: 400 }), fc.array(fc.oneof(hostileString(30), trackable, fc.constantFrom('<a href=', '"', "'", '>', '</a>', '<area href="', ' ', '&amp;', '&#x68;ttp://x.example/')), { maxLength: 30 }).map((p) => p.join(''))), (input) => {
        for (const mark of [markHtml, markText]) {
          const links = new LinkCollector();
          mark(input, links);
          for (const url of links.urls) assert.match(url, /^https?:\/\//i, `${mark.name} collected ${url}`);
          assert.equal(new Set(links.urls).size, links.urls.length, 'each destination once');
        }
      }),
      fuzzParams(1000),
    );
  });
});

describe('delivered messages under fuzzing: click links lead only to the message\'s own URLs, names are escaped', () => {
  let notify: Notify;
  let cleanup: () => void;
  const mailer = recordingMailer();
  before(async () => {
    const db = freshDatabaseUrl('sqlite');
    cleanup = db.cleanup;
    notify = await createNotify(testOptions(db.url, { mailer, baseUrl: 'http://notify.test', secret: 'fuzz-render' }));
  });
  after(async () => {
    await notify.close();
    cleanup();
  });

  test('every /notify/click link in a sent message redirects to one of the URLs written in it', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(anchor, { minLength: 1, maxLength: 6 }), hostileString(80), async (anchors, name) => {
        const email = `fuzz${n++}@example.com`;
        // a multi-line name is refused at upsert (tested elsewhere); any single line must come out escaped
        await notify.contacts.upsert({ email, name: `${name.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 150)}${MARKER}` });
        const html = `<p>Hi {{ contact.name }}</p>${anchors.map(anchorHtml).join(' ')}{notify_tracking_pixel}`;
        const before = mailer.sent.length;
        const sent = await notify.send({ to: email, subject: 'Fuzz', html }).then(
          () => true,
          (err) => {
            // anchor text is template source: a broken tag is a clear TEMPLATE_ERROR and nothing is sent
            assert.ok(isNotifyError(err, 'TEMPLATE_ERROR'), `only a template error may stop the send, got ${err}`);
            return false;
          },
        );
        if (!sent) return void assert.equal(mailer.sent.length, before, 'nothing handed to the mailer');
        const message = mailer.sent[before];
        assert.ok(message, 'a message was handed to the mailer');
        const body = String(message.html);
        assert.ok(!body.includes(MARKER), 'the contact name is escaped in the HTML part');
        const sources = new Set(anchors.map((a) => a.href).filter((h) => /^https?:\/\//i.test(h)));
        const clicks = [...body.matchAll(/http:\/\/notify\.test(\/notify\/click\/[^"'\s<>]+)/g)].map((m) => m[1].replace(/&amp;/g, '&'));
        assert.equal(new Set(clicks).size, sources.size, 'one click link per distinct destination');
        for (const path of clicks) {
          const res = await call(notify, path, { redirect: 'manual' });
          await res.arrayBuffer();
          assert.equal(res.status, 302, `${path} redirects`);
          const location = res.headers.get('location') ?? '';
          // the Location header carries the URL in its normalised, percent-encoded form
          const normalised = new Set([...sources].map((u) => new URL(u).href));
          assert.ok(normalised.has(new URL(location).href), `redirect to ${location} is one of ${[...sources].join(', ')}`);
        }
      }),
      fuzzParams(150),
    );
  });
});
