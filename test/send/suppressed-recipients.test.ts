import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { AddressObject } from 'mailparser';
import type { SendInput } from '../../src/core/send.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/*
 * notify.send() with several recipients leaves out each suppressed one (unsubscribed, bounced,
 * complained) and delivers to the rest. These cases keep a live recipient beside every suppressed one,
 * so a check skipped for one field shows at the SMTP server instead of being hidden by the
 * single-contact check.
 */

const addressesOf = (field: AddressObject | AddressObject[] | undefined) => [field ?? []].flat().flatMap((a) => a.value.map((v) => v.address));
const headerLines = (raw: Buffer) => raw.toString('latin1').split('\r\n\r\n')[0];

forEachEngine('notify.send: suppressed cc and bcc recipients', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });
  /** sends and returns the record with the one message the sink received for it */
  const sendAndReceive = async (input: SendInput) => {
    const start = sink.messages.length;
    const rec = await notify.send(input);
    assert.equal(rec.status, 'sent');
    await sink.waitFor(start + 1);
    return { rec, mail: sink.messages[start] };
  };

  test('a live to and a bounced cc: RCPT TO and the Cc header leave out exactly the bounced cc, and the send row names it', async () => {
    const bounced = await notify.contacts.upsert({ email: 'bounced-cc@example.com', status: 'bounced' });
    const { rec, mail } = await sendAndReceive({ to: 'to-1@example.com', cc: ['bounced-cc@example.com', 'cc-1@example.com'], subject: 'Invoice', text: 'Attached.' });
    assert.deepEqual(mail.envelope.to, ['to-1@example.com', 'cc-1@example.com']);
    assert.deepEqual(addressesOf(mail.parsed.cc), ['cc-1@example.com']);
    assert.deepEqual(rec.suppressed_recipients, [{ field: 'cc', contact_id: bounced.id, status: 'bounced' }]);
    assert.deepEqual((await notify.context.store.sends.getById(rec.id))?.suppressed_recipients, rec.suppressed_recipients, 'stored, not only returned');
  });

  test('a live to and a complained bcc: RCPT TO leaves out exactly the complained bcc, no Bcc header, and the send row names it', async () => {
    const complained = await notify.contacts.upsert({ email: 'complained-bcc@example.com', status: 'complained' });
    const { rec, mail } = await sendAndReceive({ to: 'to-2@example.com', bcc: ['bcc-2@example.com', 'complained-bcc@example.com'], subject: 'Receipt', text: 'Thanks.' });
    assert.deepEqual(mail.envelope.to, ['to-2@example.com', 'bcc-2@example.com']);
    assert.doesNotMatch(headerLines(mail.raw), /^Bcc:/im);
    assert.deepEqual(rec.suppressed_recipients, [{ field: 'bcc', contact_id: complained.id, status: 'complained' }]);
  });

  test('nobody left out: an empty list; everybody left out: a suppressed row naming each, nothing delivered', async () => {
    const plain = await notify.send({ to: 'to-3@example.com', cc: 'cc-3@example.com', subject: 'Hi', text: 'Hi' });
    assert.deepEqual(plain.suppressed_recipients, []);
    const gone = await notify.contacts.upsert({ email: 'gone-to@example.com', status: 'unsubscribed' });
    const bounced = await notify.contacts.get('bounced-cc@example.com');
    const complained = await notify.contacts.get('complained-bcc@example.com');
    const start = sink.messages.length;
    const rec = await notify.send({ to: 'gone-to@example.com', cc: 'bounced-cc@example.com', bcc: 'complained-bcc@example.com', subject: 'x', text: 'x' });
    assert.equal(rec.status, 'suppressed');
    assert.deepEqual(rec.suppressed_recipients, [
      { field: 'to', contact_id: gone.id, status: 'unsubscribed' },
      { field: 'cc', contact_id: bounced?.id, status: 'bounced' },
      { field: 'bcc', contact_id: complained?.id, status: 'complained' },
    ]);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sink.messages.length, start);
  });
});
