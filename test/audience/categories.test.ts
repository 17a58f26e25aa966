import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/** the List-Unsubscribe header lines as mailparser read them off the wire */
const listHeaders = (mail: SinkMessage) => mail.parsed.headerLines.filter((h) => h.key.startsWith('list-unsubscribe')).map((h) => h.line);

forEachEngine('send categories', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url }));
    await notify.contacts.upsert({ email: 'left@example.com', status: 'unsubscribed' });
    await notify.contacts.upsert({ email: 'bounced@example.com', status: 'bounced' });
    await notify.contacts.upsert({ email: 'angry@example.com', status: 'complained' });
    await notify.contacts.upsert({ email: 'reader@example.com' });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  const receipt = (to: string, category?: 'marketing' | 'transactional') => notify.send({ to, subject: 'Your receipt', text: 'Thanks for your order', category });

  test('transactional reaches an unsubscribed contact, without List-Unsubscribe headers (parsed at the SMTP sink)', async () => {
    const start = sink.messages.length;
    const sent = await receipt('left@example.com', 'transactional');
    assert.equal(sent.status, 'sent');
    await sink.waitFor(start + 1);
    const mail = sink.messages.at(-1)!;
    assert.deepEqual(mail.envelope.to, ['left@example.com']);
    assert.deepEqual(listHeaders(mail), []);
    assert.equal((await notify.contacts.get('left@example.com'))?.status, 'unsubscribed', 'the status is unchanged');
  });

  test('transactional never reaches a bounced or complained contact', async () => {
    const start = sink.messages.length;
    for (const to of ['bounced@example.com', 'angry@example.com']) assert.equal((await receipt(to, 'transactional')).status, 'suppressed', to);
    assert.equal(sink.messages.length, start);
  });

  test('marketing (the default) leaves the unsubscribed out and carries both headers to others', async () => {
    assert.equal((await receipt('left@example.com')).status, 'suppressed');
    assert.equal((await receipt('left@example.com', 'marketing')).status, 'suppressed');
    const start = sink.messages.length;
    assert.equal((await receipt('reader@example.com')).status, 'sent');
    await sink.waitFor(start + 1);
    const [unsubscribe, post] = listHeaders(sink.messages.at(-1)!);
    assert.match(unsubscribe, /^List-Unsubscribe:\s+<http:\/\/localhost:3000\/notify\/u\/[A-Za-z0-9_-]{24}>$/);
    assert.equal(post, 'List-Unsubscribe-Post: List-Unsubscribe=One-Click');
  });

  test('an unknown category is INVALID_INPUT and nothing is stored or sent', async () => {
    const start = sink.messages.length;
    const rows = async () => Number((await notify.context.store.db.selectFrom('notify_sends').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const before = await rows();
    for (const category of ['promo', 'Transactional', '', 1, ['transactional']]) {
      await assert.rejects(notify.send({ to: 'reader@example.com', subject: 's', text: 't', category: category as never }), (e) => isNotifyError(e, 'INVALID_INPUT'), String(category));
    }
    assert.equal(await rows(), before);
    assert.equal(sink.messages.length, start);
  });
});
