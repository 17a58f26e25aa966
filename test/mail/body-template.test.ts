import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { newToken } from '../../src/core/tokens.ts';
import type { OutgoingMessage } from '../../src/mail/contract.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { testOptions } from '../helpers/engines.ts';

/**
 * Each recipient's message is one copy of a body template with their values written into it, as
 * long as the values have the lengths of the first recipient's; otherwise the parts are joined.
 * Either way the parsed message must be exactly what the recipient's own values make.
 */
describe('message assembly from a body template', () => {
  let notify: Notify;
  before(async () => {
    notify = await createNotify(testOptions('sqlite::memory:', { baseUrl: 'https://news.example.com' }));
  });
  after(() => notify.close());

  const contact = (id: number, name: string, email = `r${id}@example.com`) => ({ id, email, name, status: 'subscribed', unsubscribe_token: newToken(), attributes: { city: name.length > 4 ? 'Saint-Étienne' : 'Köln' } });

  test('same-length and different-length values, non-ASCII in the values, the text and the headers', async () => {
    const html = [
      '<p>Hello {{ contact.name }} from {{ contact.attributes.city }}, = signs and a long line ' + 'x'.repeat(200) + '</p>',
      ...Array.from({ length: 5 }, (_, i) => `<p><a href="https://shop.example/item/${i}?a=1&amp;b=2">Item ${i}</a></p>`),
      '<p><a href="{notify_unsubscribe_url}">Unsubscribe</a></p>',
    ].join('\n');
    const message = await notify.context.dispatcher.prepare('c9', { subject: 'For {{ contact.name }}', html });
    const recipients = [contact(1, 'Ann'), contact(2, 'Bob'), contact(3, 'Christopher'), contact(4, 'Zoë'), contact(5, 'Åsa', 'åsa@exämple.com'), contact(6, 'Ann')];
    const out: OutgoingMessage[] = [];
    for (const [i, c] of recipients.entries()) out.push(await notify.context.dispatcher.render(message, { send: { id: i + 1, token: newToken() }, contact: c }));
    for (const [i, m] of out.entries()) {
      const c = recipients[i];
      const parsed = await simpleParser(m.raw!);
      assert.equal(parsed.subject, `For ${c.name}`);
      assert.equal(parsed.messageId, m.messageId);
      assert.equal((parsed.to as { value: { address: string }[] }).value[0].address, c.email);
      // what the recipient's own values make, joined without any template
      assert.equal(parsed.html, m.html, `html of ${c.name}`);
      assert.equal(parsed.text?.replace(/\r?\n$/, ''), m.text?.replace(/\r?\n$/, ''), `text of ${c.name}`);
      assert.match(String(parsed.html), new RegExp(`Hello ${c.name} from ${c.attributes.city}`));
      assert.equal(String(parsed.html).match(new RegExp(`/notify/click/${m.sendToken}\\?l=c9\\.\\d\\.`, 'g'))?.length, 5, 'every link carries this send token');
      assert.match(String(parsed.html), new RegExp(`/notify/unsubscribe/${c.unsubscribe_token}\\?s=${m.sendToken}`));
      for (const line of m.raw!.toString('latin1').split('\r\n')) assert.ok(line.length <= 998, 'no line over the RFC 5322 limit');
    }
  });
});
