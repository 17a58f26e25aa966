import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { type ParsedMail, simpleParser } from 'mailparser';
import { isNotifyError } from '../../src/errors.ts';
import type { Mailer, OutgoingMessage } from '../../src/mail/contract.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { LinkCollector, markHtml, split } from '../../src/render/tracking-rewrite.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';

describe('render pipeline', () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-render-'));
  const db = freshDatabaseUrl('sqlite');
  const outbox: OutgoingMessage[] = [];
  const mailer: Mailer = {
    name: 'capture',
    async send(m) {
      outbox.push(m);
      return true;
    },
  };
  let notify: Notify;
  const last = async (): Promise<ParsedMail> => simpleParser(outbox[outbox.length - 1].raw!);

  before(async () => {
    mkdirSync(join(dir, 'views/notify/layouts'), { recursive: true });
    mkdirSync(join(dir, 'views/brand'), { recursive: true });
    mkdirSync(join(dir, 'md/sub'), { recursive: true });
    writeFileSync(join(dir, 'views/notify/layouts/default.liquid'), '<html><body><div id="app-default">{{ content | raw }}</div><a href="{notify_unsubscribe_url}">bye {{ contact.email }}</a></body></html>');
    writeFileSync(join(dir, 'views/brand/plain.liquid'), '<html><body><main id="brand">{{ content | raw }}</main>{notify_tracking_pixel}</body></html>');
    writeFileSync(join(dir, 'md/sub/welcome.md'), '# Welcome {{ contact.name }}\n\nRead [the guide](https://example.com/guide).');
    writeFileSync(join(dir, 'secret.txt'), 'top secret');
    symlinkSync(join(dir, 'secret.txt'), join(dir, 'md/link.md'));
    notify = await createNotify(testOptions(db.url, { mailer, viewsPath: join(dir, 'views'), markdownPath: join(dir, 'md') }));
    await notify.contacts.upsert({ email: 'ann@example.com', name: '<b>Ann</b> & "Co"', attributes: { plan: 'pro' } });
    await notify.contacts.upsert({ email: 'bob@example.com', name: 'Bob', attributes: { plan: 'free' } });
  });
  after(async () => {
    await notify.close();
    db.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test('contact variables are escaped in HTML and plain in the text part; the app layout override is used', async () => {
    await notify.send({ to: 'ann@example.com', subject: 'For {{ contact.name }}', html: '<p id="x">Hi {{ contact.name }}</p>' });
    const m = await last();
    assert.equal(m.subject, 'For <b>Ann</b> & "Co"');
    assert.match(m.html as string, /<p id="x">Hi &lt;b&gt;Ann&lt;\/b&gt; &amp; &(quot|#34);Co&(quot|#34);<\/p>/);
    assert.match(m.text as string, /Hi <b>Ann<\/b> & "Co"/);
    assert.match(m.html as string, /id="app-default"/, 'viewsPath/notify/layouts/default.liquid replaces the shipped layout');
    assert.match(m.html as string, /bye ann@example\.com/);
    assert.match(m.html as string, /<img src="http:\/\/localhost:3000\/notify\/open\/[A-Za-z0-9_-]{22}" width="1" height="1" alt="">/, 'pixel injected when the body has no placeholder');
  });

  test('markdownFile under markdownPath, a named layout, and one compile serving tags that read contact', async () => {
    await notify.send({ to: 'ann@example.com', subject: 'Welcome', markdownFile: 'sub/welcome.md', layout: 'brand/plain' });
    let m = await last();
    assert.match(m.html as string, /<main id="brand"><h1[^>]*>Welcome &lt;b&gt;Ann/);
    assert.match(m.html as string, /notify\/click\//);
    const html = '{% if contact.attributes.plan == "pro" %}<a href="https://example.com/pro">Pro</a>{% else %}<a href="https://example.com/upgrade">Upgrade</a>{% endif %} <a href="https://example.com/all">All</a>';
    for (const email of ['ann@example.com', 'bob@example.com']) {
      const rec = await notify.send({ to: email, subject: 'Plan', html, layout: false });
      m = await last();
      const scope = `m${rec.id}`;
      const urls = await notify.context.store.links.urlsForScope(scope);
      const refs = [...(m.html as string).matchAll(/\?l=(m\d+)\.(\d+)\./g)].map((x) => urls[Number(x[2])]);
      assert.deepEqual(refs, email === 'ann@example.com' ? ['https://example.com/pro', 'https://example.com/all'] : ['https://example.com/upgrade', 'https://example.com/all']);
    }
  });

  test('markdown files outside markdownPath (.., absolute, symlink) are refused', async () => {
    for (const [file, code] of [
      ['../secret.txt', 'PATH_ESCAPE'],
      ['sub/../../secret.txt', 'PATH_ESCAPE'],
      [join(dir, 'secret.txt'), 'PATH_ESCAPE'],
      ['link.md', 'PATH_ESCAPE'],
      ['missing.md', 'NOT_FOUND'],
    ] as const) {
      await assert.rejects(notify.send({ to: 'ann@example.com', subject: 'x', markdownFile: file }), (e) => isNotifyError(e, code), file);
    }
  });

  test('an explicit text part, custom data and a text-only message', async () => {
    await notify.send({ to: 'bob@example.com', subject: '{{ greeting }}', html: '<p>{{ greeting }}</p>', text: '{{ greeting }} {{ contact.name }}: https://example.com/t', data: { greeting: 'Hello' } });
    let m = await last();
    assert.equal(m.subject, 'Hello');
    assert.match(m.text as string, /^Hello Bob: http:\/\/localhost:3000\/notify\/click\/[A-Za-z0-9_-]{22}\?l=m\d+\.\d+\.[A-Za-z0-9_-]{16}/);
    await notify.send({ to: 'bob@example.com', subject: 'Plain', text: 'Just text, see https://example.com/x. Bye {notify_unsubscribe_url}' });
    m = await last();
    assert.equal(m.html, false);
    assert.match(m.text as string, /see http:\/\/localhost:3000\/notify\/click\/\S+\. Bye http:\/\/localhost:3000\/notify\/unsubscribe\//);
  });

  test('template errors and unknown layouts are clear errors', async () => {
    await assert.rejects(notify.send({ to: 'bob@example.com', subject: 'x', html: '{{ contact.name | nosuchfilter }}' }), (e) => isNotifyError(e, 'TEMPLATE_ERROR'));
    await assert.rejects(notify.send({ to: 'bob@example.com', subject: 'x', html: 'x', layout: 'nope/missing' }), (e) => isNotifyError(e, 'NOT_FOUND'));
    await assert.rejects(notify.send({ to: 'bob@example.com', subject: 'x', html: 'x', layout: '../../etc/passwd' }), (e) => isNotifyError(e, 'INVALID_INPUT'));
  });
});

type Piece = { kind: 'anchor'; href: string; q: string; text: string } | { kind: 'text'; text: string };
/** An anchor with `value` as its href attribute, quoted with q. */
const anchorHtml = (p: { q: string; text: string }, value: string) => `<a class="c" href=${p.q}${value}${p.q}>${p.text}</a>`;

describe('link rewriting', () => {
  test('any markup: no crash, every http(s) href becomes a click link, nothing else changes', () => {
    const trackable = fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.constant('HTTP://X.Y/Z'));
    const other = fc.constantFrom('mailto:a@b.c', 'tel:+1', '#top', '/relative', 'javascript:alert(1)', '{notify_unsubscribe_url}', 'ftp://x.y/z');
    // the URL without its own quote character; the attribute escapes & as HTML wants
    const anchor = (url: fc.Arbitrary<string>): fc.Arbitrary<Piece> =>
      fc.tuple(url, fc.constantFrom('"', "'"), fc.string()).map(([u, q, t]) => ({ kind: 'anchor', href: u.replaceAll(q, ''), q, text: t.replace(/[<>]/g, '') }));
    const filler = fc.string().map((s): Piece => ({ kind: 'text', text: s.replace(/[<>]/g, '') }));
    const tracked = (href: string) => /^https?:\/\//i.test(href);
    fc.assert(
      fc.property(fc.array(fc.oneof(anchor(trackable), anchor(other), filler), { maxLength: 10 }), anchor(trackable), fc.nat(), (rest, sure, at) => {
        // at least one trackable link in every case, so the checks below never run over nothing
        const cut = at % (rest.length + 1);
        const pieces = [...rest.slice(0, cut), sure, ...rest.slice(cut)];
        const html = pieces.map((p) => (p.kind === 'anchor' ? anchorHtml(p, p.href.replaceAll('&', '&amp;')) : p.text)).join(' ');
        const links = new LinkCollector();
        const parts = split(markHtml(html, links), { host: 'https://t.x', scope: 'c1', positions: links.urls.map((_, i) => i) });
        const out = parts.map((p) => (typeof p === 'string' ? p : `<${p}>`)).join('');

        const expectedUrls = [...new Set(pieces.flatMap((p) => (p.kind === 'anchor' && tracked(p.href) ? [p.href] : [])))];
        assert.ok(expectedUrls.length >= 1);
        assert.deepEqual(links.urls, expectedUrls, 'exactly the http(s) hrefs, once each, in order');
        const expected = pieces.map((p) => {
          if (p.kind === 'text') return p.text;
          if (tracked(p.href)) return anchorHtml({ ...p, q: '"' }, `https://t.x/notify/click/<-1>?l=c1.${expectedUrls.indexOf(p.href)}.<-2>`);
          return anchorHtml(p, p.href === '{notify_unsubscribe_url}' ? '<-3>' : p.href.replaceAll('&', '&amp;'));
        });
        assert.equal(out, expected.join(' '), 'only the tracked hrefs changed');
      }),
      { numRuns: 300 },
    );
  });
});
