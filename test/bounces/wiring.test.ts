// The bounce mailbox as an instance wires it from its options: VERP envelope senders on every send,
// the mailbox polled through notify.bounces, reports applied as webhook events are.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verpAddress } from '../../src/bounces/index.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { BOUNCE_DOMAIN, REAL_REPORTS } from './helpers.ts';
import { appendAll, folderMessages, freshFolders, mailboxUrl, NO_IMAP, useImapClient, withToken } from './imap.ts';

const URL_OK = 'imap://notify:secret-pass@127.0.0.1:1/INBOX';

describe('bounce mailbox options', () => {
  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['bounceMailbox without bounceDomain', { bounceMailbox: URL_OK }, /'bounceMailbox' from createNotify\(\) options needs 'bounceDomain'/],
    ['an http URL', { bounceMailbox: 'http://x@y/INBOX', bounceDomain: BOUNCE_DOMAIN }, /must be an imaps:\/\/ or imap:\/\/ URL/],
    ['no password', { bounceMailbox: 'imaps://notify@mail.example/INBOX', bounceDomain: BOUNCE_DOMAIN }, /needs a user and a password/],
    ['not a URL', { bounceMailbox: 'mail.example', bounceDomain: BOUNCE_DOMAIN }, /is not a URL/],
    ['a bounceDomain that is no domain', { bounceMailbox: URL_OK, bounceDomain: 'bounces@example.com' }, /'bounceDomain' .*must be a domain name/],
  ];
  for (const [what, options, message] of bad) {
    test(`${what}: CONFIG_INVALID at start, the password never echoed`, async () => {
      await assert.rejects(
        createNotify(testOptions('sqlite::memory:', options)),
        (err) => isNotifyError(err, 'CONFIG_INVALID') && message.test(err.message) && !err.message.includes('secret-pass'),
      );
    });
  }

  test('from .env text: the same options, the same error', async () => {
    await assert.rejects(
      createNotify({ ...testOptions('sqlite::memory:'), bounceMailbox: undefined, env: { NOTIFY_BOUNCE_MAILBOX: URL_OK } }),
      (err) => isNotifyError(err, 'CONFIG_INVALID') && /NOTIFY_BOUNCE_MAILBOX.*needs 'bounceDomain'/.test(err.message),
    );
  });

  test('without a bounce mailbox there is none to poll', async () => {
    const notify = await createNotify(testOptions('sqlite::memory:'));
    try {
      assert.equal(notify.bounces, undefined);
    } finally {
      await notify.close();
    }
  });
});

describe('VERP envelope sender', () => {
  let sink: SmtpSink;
  before(async () => {
    sink = await startSmtpSink();
  });
  after(() => sink.close());

  forEachEngine('every send leaves with MAIL FROM bounces+<send token>@<bounceDomain>', (h) => {
    test('a one-off send: the envelope names its token, the From header stays the sender', async () => {
      const own = await createNotify(testOptions(h.url, { mailer: sink.url, bounceDomain: BOUNCE_DOMAIN }));
      try {
        const to = `ann-${h.engine}@example.com`;
        const send = await own.send({ to, subject: 'Hi', text: 'Hello' });
        assert.equal(send.status, 'sent');
        const m = sink.messages.find((x) => x.envelope.to.includes(to))!;
        assert.equal(m.envelope.from, verpAddress(send.token, BOUNCE_DOMAIN));
        assert.equal(m.parsed.from?.value[0]?.address, 'news@example.com');
      } finally {
        await own.close();
      }
    });
  });
});

describe('notify.bounces over IMAP', { skip: NO_IMAP }, () => {
  const imap = useImapClient();
  let sink: SmtpSink;
  before(async () => {
    sink = await startSmtpSink();
  });
  after(() => sink.close());

  forEachEngine('a send bounced through the instance’s own mailbox', (h) => {
    test('sent, its DSN in the mailbox, one poll: the contact is bounced, its drip enrollment cancelled, the event row written, the app event fires, the report moves to notify-processed', async () => {
      const { inbox } = await freshFolders(imap());
      const notify = await createNotify(testOptions(h.url, { mailer: sink.url, bounceDomain: BOUNCE_DOMAIN, bounceMailbox: mailboxUrl({ folder: inbox }) }));
      try {
        const fired: string[] = [];
        notify.on('notify:contact.bounced', (e) => {
          fired.push(`${e.contact.email} ${e.provider}`);
        });
        const postfix = REAL_REPORTS[0];
        // an active drip enrollment, cancelled as a webhook bounce cancels it
        const sequence = await notify.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 60, subject: 'Later', html: '<p>x</p>' }] });
        const enrollment = await notify.drips.enroll({ contact: (await notify.contacts.upsert({ email: postfix.to })).id, sequence: sequence.id });
        const send = await notify.send({ to: postfix.to, subject: 'Hi', text: 'Hello' });
        assert.equal(send.status, 'sent');
        await appendAll(imap(), inbox, [withToken(postfix.file, postfix.token, send.token)]);
        assert.deepEqual(await notify.bounces!.poll(), { processed: 1, skipped: 0, failed: 0 });
        assert.equal((await notify.contacts.get(postfix.to))?.status, 'bounced');
        assert.deepEqual(fired, [`${postfix.to} bounce-mailbox`]);
        const db = notify.context.store.db;
        assert.equal((await db.selectFrom('notify_enrollments').select('status').where('id', '=', enrollment.id).executeTakeFirstOrThrow()).status, 'cancelled');
        const rows = await db.selectFrom('notify_events').select(['type', 'send_id']).where('type', '=', 'bounce').execute();
        assert.deepEqual(rows.map((r) => [r.type, Number(r.send_id)]), [['bounce', send.id]]);
        assert.equal((await folderMessages(imap(), inbox)).length, 0);
        assert.equal((await folderMessages(imap(), 'notify-processed')).filter((m) => /Undelivered/.test(m.subject)).length >= 1, true);
        // read again (a copy put back): applied once
        await appendAll(imap(), inbox, [withToken(postfix.file, postfix.token, send.token)]);
        assert.deepEqual(await notify.bounces!.poll(), { processed: 1, skipped: 0, failed: 0 });
        assert.deepEqual(fired, [`${postfix.to} bounce-mailbox`]);
      } finally {
        await notify.close();
      }
    });

    test('a wrong password: the poll fails with CONFIG_INVALID naming the mailbox, never the password', async () => {
      const notify = await createNotify(testOptions(h.url, { bounceDomain: BOUNCE_DOMAIN, bounceMailbox: mailboxUrl({ pass: 'wrong-secret-456' }), migrate: false }));
      try {
        await assert.rejects(notify.bounces!.poll(), (err) => isNotifyError(err, 'CONFIG_INVALID') && /login failed/.test(err.message) && !err.message.includes('wrong-secret-456'));
      } finally {
        await notify.close();
      }
    });
  });
});
