import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { compileMessage, type MessageTemplate, type RenderEnv } from '../../src/render/compile.ts';
import { joinParts, personalize, type Recipient } from '../../src/render/personalize.ts';

/**
 * The compile + personalize pair on its own (no database, no mailer): the HTML a recipient gets, as a
 * string, for layouts written on the fly.
 */

const dir = mkdtempSync(join(tmpdir(), 'notify-compile-'));
mkdirSync(join(dir, 'views/t'), { recursive: true });
let layouts = 0;
/** a layout view holding `source`; returns its name */
function layout(source: string): string {
  const name = `t/l${layouts++}`;
  writeFileSync(join(dir, `views/${name}.liquid`), source);
  return name;
}

const env: RenderEnv = {
  markdownPath: dir,
  viewsPath: join(dir, 'views'),
  defaultLayout: 'notify/layouts/default',
  host: 'https://t.example',
  cwd: dir,
  storeLinks: async (_scope, urls) => urls.map((_, i) => i),
};
const recipient = (name: string): Recipient => ({ token: 'TOKEN0123456789abcdefg', sig: 'SIG', unsubscribeUrl: 'https://t.example/notify/unsubscribe/u', contact: { name, email: 'x@example.com' } });

async function htmlFor(tpl: MessageTemplate, name = 'Chloe'): Promise<{ html: string; text: string; subject: string }> {
  const compiled = await compileMessage(env, 's1', tpl);
  const p = await personalize(compiled, recipient(name));
  return { html: joinParts(p.variant.html!, p.recipient, p.htmlValues), text: joinParts(p.variant.text, p.recipient, p.textValues), subject: p.subject };
}
const opens = (html: string) => html.split('https://t.example/notify/open/TOKEN0123456789abcdefg').length - 1;

describe('compile: one pixel, whole documents, layout false, a personalised title', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('any number of pixel placeholders in body and layout: exactly one pixel, the body first', async () => {
    const P = '{notify_tracking_pixel}';
    const layoutsByCount = [0, 1, 2, 3].map((n) => layout(`<html><body><div id="L">${`<i>${P}</i>`.repeat(n)}{{ content | raw }}</div></body></html>`));
    await fc.assert(
      fc.asyncProperty(fc.nat(3), fc.nat(3), fc.constantFrom<'layout' | 'none' | 'document'>('layout', 'none', 'document'), async (inBody, inLayout, shape) => {
        const bodyHtml = `<p id="B">${`<b>${P}</b>`.repeat(inBody)}</p>`;
        const html = shape === 'document' ? `<!doctype html><html><body>${bodyHtml}</body></html>` : bodyHtml;
        const out = (await htmlFor({ subject: 's', html, layout: shape === 'none' ? false : layoutsByCount[inLayout] })).html;
        assert.equal(opens(out), 1, `${inBody} in the body, ${inLayout} in the layout, ${shape}`);
        if (inBody > 0) assert.match(out, /<p id="B"><b><img src="https:\/\/t\.example\/notify\/open\//, 'the body places it');
        else if (inLayout > 0 && shape === 'layout') assert.match(out, /<div id="L"><i><img /, "else the layout's first");
        else assert.match(out, /<img [^>]*><\/body>|<img [^>]*>$/, 'else before </body> or at the end');
        assert.equal(/id="L"/.test(out), shape === 'layout', 'wrapped only when a layout applies');
      }),
      { numRuns: 60 },
    );
  });

  test('the layout title and any printed subject are the recipient subject, escaped; filters apply', async () => {
    const name = layout('<html><head><title>{{ subject }}</title></head><body><h1>{{- subject | upcase -}}</h1>{{ content | raw }}<p>{{ campaign.subject }}</p></body></html>');
    const tpl = { subject: 'News for {{ contact.name }}', html: '<p>hi</p>', layout: name, data: { campaign: { subject: 'News for {{ contact.name }}' } } };
    const compiled = await compileMessage(env, 's2', tpl);
    for (const who of ['Chloe', 'Ann & <Bob>']) {
      const p = await personalize(compiled, recipient(who));
      const html = joinParts(p.variant.html!, p.recipient, p.htmlValues);
      const esc = (s: string) => s.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;');
      assert.equal(p.subject, `News for ${who}`);
      assert.match(html, new RegExp(`<title>News for ${esc(who)}</title>`));
      assert.match(html, new RegExp(`<h1>NEWS FOR ${esc(who.toUpperCase())}</h1>`));
      assert.match(joinParts(p.variant.text, p.recipient, p.textValues), new RegExp(`NEWS FOR ${who.toUpperCase()}`), 'unescaped in the text part');
      assert.match(html, /<p>News for \{\{ contact\.name \}\}<\/p>/, 'campaign.subject is data, not the subject');
    }
  });

  test('a subject that is the same for everyone stays literal in the layout', async () => {
    const out = await htmlFor({ subject: 'Weekly & more', html: '<p>x</p>' });
    assert.match(out.html, /<title>Weekly &amp; more<\/title>/);
    assert.equal(out.subject, 'Weekly & more');
  });

  test('a whole document from markdown or Liquid is detected after rendering; a fragment mentioning <html> in code is wrapped', async () => {
    const wrapped = (html: string) => /<div class="card"/.test(html);
    assert.equal(wrapped((await htmlFor({ subject: 's', html: '{% if true %}<!DOCTYPE html><html><body>x</body></html>{% endif %}' })).html), false);
    assert.equal(wrapped((await htmlFor({ subject: 's', markdown: 'Write `<html>` first:\n\n```\n<!DOCTYPE html>\n<html lang="en"></html>\n```' })).html), true);
    assert.equal(wrapped((await htmlFor({ subject: 's', html: '<p>&lt;html&gt; is a tag</p>' })).html), true);
  });
});
