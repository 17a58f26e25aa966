import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import type { OutgoingMessage } from '../../src/mail/contract.ts';
import { createOutboxMailer } from '../../src/mail/outbox.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { dkimKey, verifyDkim } from '../helpers/dkim.ts';
import { testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * A recipient's message is a list of buffers: the literal runs of the compiled message, shared by
 * every recipient, and that recipient's header block and values. Whatever the content (Liquid
 * branches, long lines, a line starting with "."), the parts in order must be exactly the message
 * the recipient's own values make, and no recipient may change what another one's parts hold.
 */
const link = (i: number) => `<a href="https://shop.example/item/${i}?a=1&amp;b=2&amp;q=${'z'.repeat(i * 9)}">Item ${i}</a>`;
const SPECS: Record<string, { subject: string; html?: string; text?: string; markdown?: string }> = {
  links: { subject: 'This week', html: `<p>Hi</p>${Array.from({ length: 12 }, (_, i) => link(i)).join('\n')}<p><a href="{notify_unsubscribe_url}">u</a> <a href="{notify_preferences_url}">p</a></p>` },
  liquid: {
    subject: 'For {{ contact.name }}',
    html: `{% if contact.name == "Ann" %}<p>Ann's branch ${link(1)}</p>{% else %}<p>Other branch ${link(2)} {{ contact.name }}</p>{% endif %}<p>Hello {{ contact.name }} from {{ contact.attributes.city }}</p>\n.leading dot\n<p>${'long line '.repeat(60)}</p>`,
  },
  text: { subject: 'Dots', text: `.first line starts with a dot\n{{ contact.name }}\n.\n..two\n${'x'.repeat(200)}\n.after a long line\n{notify_unsubscribe_url}` },
  markdown: { subject: 'Über {{ contact.name }}', markdown: `# Hi {{ contact.name }}\n\n.dot paragraph\n\n[link](https://example.com/${'é'.repeat(40)}) [two](https://example.com/two)\n\n${'ünïcödé '.repeat(30)}` },
};
const NAMES = ['Ann', 'Bob', 'Christopher', 'Zoë', '.dot', 'O\'Brien "Q"', '日本語の名前', 'x'.repeat(90)];
const contacts = NAMES.map((name, i) => ({ id: i + 1, email: `r${i}@example.com`, name, status: 'subscribed', unsubscribe_token: `U${String(i).padStart(21, '0')}`, attributes: { city: i % 2 ? 'Saint-Étienne' : 'Köln' } }));
const token = (scope: number, i: number) => `T${scope}${String(i).padStart(20, '0')}`;

describe('a message as a list of buffers', () => {
  let notify: Notify;
  before(async () => {
    notify = await createNotify(testOptions('sqlite::memory:', { baseUrl: 'https://news.example.com' }));
  });
  after(() => notify.close());

  for (const [name, spec] of Object.entries(SPECS)) {
    test(`${name}: the parts are the recipient's whole message, and stay so after later recipients`, async () => {
      const message = await notify.context.dispatcher.prepare(`c${name.length}`, spec);
      const seen: { out: OutgoingMessage; bytes: Buffer }[] = [];
      for (let round = 0; round < 2; round++) {
        for (const [i, c] of contacts.entries()) {
          const out = await notify.context.dispatcher.render(message, { send: { id: 100 * round + i + 1, token: token(round, i) }, contact: c });
          const parts = out.rawParts!;
          assert.ok(parts.length > 2, 'header block and body pieces');
          const bytes = Buffer.concat(parts);
          assert.deepEqual(out.raw, bytes, 'raw is the parts joined');
          const parsed = await simpleParser(bytes);
          assert.equal(parsed.subject, spec.subject.replace('{{ contact.name }}', c.name));
          if (out.html !== undefined) assert.equal(parsed.html, out.html, `html of ${c.name}`);
          assert.equal(parsed.text?.replace(/\r?\n$/, ''), out.text?.replace(/\r?\n$/, ''), `text of ${c.name}`);
          const body = bytes.toString('latin1').split('\r\n\r\n').slice(1).join('\r\n\r\n');
          for (const line of body.split('\r\n')) assert.ok(line.length <= 76, `quoted-printable line of ${line.length}`);
          assert.doesNotMatch(bytes.toString('latin1'), /[^\r]\n|\r[^\n]/, 'CRLF line ends only');
          seen.push({ out, bytes });
        }
      }
      // the shared pieces were never written to: every earlier message still reads as it did
      for (const { out, bytes } of seen) assert.deepEqual(Buffer.concat(out.rawParts!), bytes);
    });
  }

  test('empty values (no contact: no unsubscribe URL; a Liquid value that prints nothing) leave no empty part', async () => {
    const message = await notify.context.dispatcher.prepare('c31', { subject: 'Group', html: `<p>[{{ contact.attributes.none }}]</p><p><a href="{notify_unsubscribe_url}">u</a></p>${link(3)}` });
    for (let i = 0; i < 3; i++) {
      const out = await notify.context.dispatcher.render(message, { send: { id: 300 + i, token: token(3, i) }, to: ['a@example.com', 'b@example.com'] });
      assert.ok(out.rawParts!.every((p) => p.length > 0));
      const parsed = await simpleParser(Buffer.concat(out.rawParts!));
      assert.equal(parsed.html, out.html);
      assert.match(String(parsed.html), /<p>\[\]<\/p><p><a href="" [^>]*>u<\/a>/);
      assert.deepEqual(out.raw, Buffer.concat(out.rawParts!));
    }
  });

  test('recipients with and without empty values in turn, on one compiled message: each list is its own whole message', async () => {
    const message = await notify.context.dispatcher.prepare('c32', { subject: 'Mixed', html: `<p>[{{ contact.attributes.city }}]</p><p><a href="{notify_unsubscribe_url}">u</a></p>${link(4)}` });
    const seen: { out: OutgoingMessage; bytes: Buffer }[] = [];
    for (let i = 0; i < 6; i++) {
      // a contact with a city (no empty value), one without (an empty slot), a send to two addresses (no unsubscribe URL)
      const c = { ...contacts[i], attributes: i % 3 === 1 ? {} : { city: 'Köln' } };
      const target = i % 3 === 2 ? { to: ['a@example.com', 'b@example.com'] } : { contact: c };
      const out = await notify.context.dispatcher.render(message, { send: { id: 400 + i, token: token(4, i) }, ...target });
      const bytes = Buffer.concat(out.rawParts!);
      assert.ok(out.rawParts!.every((p) => p.length > 0));
      assert.deepEqual(out.raw, bytes);
      assert.equal((await simpleParser(bytes)).html, out.html);
      assert.ok(bytes.includes(token(4, i)), 'the recipient\'s own token');
      seen.push({ out, bytes });
    }
    for (const { out, bytes } of seen) assert.deepEqual(Buffer.concat(out.rawParts!), bytes);
  });

  test('the outbox writes the parts as they are: more buffers than one writev call takes (IOV_MAX 1024)', async () => {
    const html = Array.from({ length: 700 }, (_, i) => link(i % 40)).join('\n');
    const message = await notify.context.dispatcher.prepare('c700', { subject: 'Many links', html });
    const out = await notify.context.dispatcher.render(message, { send: { id: 7, token: token(7, 7) }, contact: contacts[4] });
    assert.ok(out.rawParts!.length > 1100, `${out.rawParts!.length} parts`);
    const dir = mkdtempSync(join(tmpdir(), 'notify-parts-'));
    try {
      out.envelopeFrom = 'bounces+x@news.example.com';
      await createOutboxMailer(dir).send(out);
      const [file] = readdirSync(dir);
      assert.deepEqual(readFileSync(join(dir, file)), Buffer.concat([Buffer.from('Return-Path: <bounces+x@news.example.com>\r\n'), out.raw!]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the parts over SMTP, signed', () => {
  let sink: SmtpSink;
  let notify: Notify;
  const key = dkimKey();
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions('sqlite::memory:', { baseUrl: 'https://news.example.com', mailer: sink.url, fromEmail: 'news@news.example', dkim: { domainName: 'news.example', keySelector: 's1', privateKey: key.privateKey } }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('lines starting with "." (literal text and values) arrive intact; mailauth verifies every signature', async () => {
    const expected: string[] = [];
    let n = 0;
    for (const [name, spec] of Object.entries(SPECS)) {
      const message = await notify.context.dispatcher.prepare(`s${name.length}`, spec);
      for (const [i, c] of contacts.entries()) {
        const out = await notify.context.dispatcher.render(message, { send: { id: 1000 + n, token: token(9, n) }, contact: c });
        expected.push(String(out.text).replace(/\r?\n$/, ''));
        const outcome = await notify.context.dispatcher.deliver(message, { send: { id: 1000 + n, token: token(9, n) }, contact: c });
        assert.equal(outcome.status, 'sent', `${name} to ${contacts[i].name}`);
        n++;
      }
    }
    await sink.waitFor(n);
    for (const [i, m] of sink.messages.entries()) {
      assert.equal(m.parsed.text?.replace(/\r?\n$/, ''), expected[i]);
      const [check] = await verifyDkim(m.raw, { 's1._domainkey.news.example': key.record });
      assert.equal(check.result, 'pass', check.comment);
    }
    assert.ok(sink.messages.some((m) => /^\.dot$/m.test(String(m.parsed.text))), 'a value at the start of a line that starts with "."');
    assert.ok(sink.messages.some((m) => /^\.first line/m.test(String(m.parsed.text))));
  });
});
