import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBounceMailbox, UNREADABLE_FLAG } from '../../src/bounces/index.ts';
import { applyWebhookEvents } from '../../src/core/webhook-events.ts';
import { newToken } from '../../src/core/tokens.ts';
import { isNotifyError } from '../../src/errors.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { BOUNCE_DOMAIN, fixture, memoryLog, REAL_REPORTS } from './helpers.ts';
import { appendAll, folderMessages, freshFolders, imapPort, mailboxFor, mailboxUrl, NO_IMAP, sendWithToken, useImapClient, withToken } from './imap.ts';

const POSTFIX = REAL_REPORTS[0];

describe('bounce mailbox over IMAP', { skip: NO_IMAP }, () => {
  const imap = useImapClient();

  forEachEngine('reports applied like webhook events', (h) => {
    const notify = useNotify(h);

    test('real DSNs from Postfix, Exim, Exchange and Gmail and two abuse reports: applied, moved to the processed folder, once', async () => {
      const { inbox, done } = await freshFolders(imap());
      const sends = [];
      for (const r of REAL_REPORTS) {
        const token = newToken();
        sends.push({ ...r, fixtureToken: r.token, token, ...(await sendWithToken(notify(), r.to, token, `<${token}@notify.test>`)) });
      }
      await appendAll(
        imap(),
        inbox,
        sends.map((s) => withToken(s.file, s.fixtureToken, s.token)),
      );
      const fired: string[] = [];
      notify().on('notify:contact.bounced', (e) => {
        fired.push(`bounced ${e.contact.email} ${e.provider}`);
      });
      notify().on('notify:contact.complained', (e) => {
        fired.push(`complained ${e.contact.email} ${e.provider}`);
      });
      const { log, lines } = memoryLog();
      const mailbox = mailboxFor(notify(), { url: mailboxUrl({ folder: inbox }), processedFolder: done, log });

      assert.deepEqual(await mailbox.poll(), { processed: 7, skipped: 0, failed: 0 });

      for (const s of sends) {
        const contact = await notify().contacts.get(s.to);
        assert.equal(contact?.status, s.type === 'bounce' ? 'bounced' : 'complained', `${s.mta}: ${s.to}`);
        const rows = await notify().context.store.db.selectFrom('notify_events').select(['type', 'send_id', 'contact_id']).where('contact_id', '=', s.contactId).execute();
        assert.deepEqual(
          rows.map((r) => [r.type, Number(r.send_id)]),
          [[s.type, s.id]],
          `${s.mta}: one event row, attributed to the send`,
        );
      }
      assert.deepEqual(fired.sort(), sends.map((s) => `${s.type === 'bounce' ? 'bounced' : 'complained'} ${s.to} bounce-mailbox`).sort());
      assert.deepEqual(await folderMessages(imap(), inbox), []);
      assert.equal((await folderMessages(imap(), done)).length, 7);
      // The RFC 3464 example also names two addresses the send never went to: logged, not applied.
      const mismatch = lines.find((l) => l.msg.startsWith('bounce report names a recipient its send did not go to'));
      assert.deepEqual(mismatch?.reported, ['arathib@vnet.ibm.com', 'johnh@hpnjld.njd.hp.com']);
      assert.equal(await notify().contacts.get('arathib@vnet.ibm.com'), undefined);

      assert.deepEqual(await mailbox.poll(), { processed: 0, skipped: 0, failed: 0 });
      await mailbox.close();
    });

    test('what it cannot use stays in the folder, flagged and logged with the reason; the 20 MB message is never downloaded', async () => {
      const { inbox, done } = await freshFolders(imap());
      const mismatched = newToken();
      await sendWithToken(notify(), 'someone-else@domain.com', mismatched, `<${mismatched}@notify.test>`);
      const big = `From: a@example.com\r\nTo: bounces+${newToken()}@${BOUNCE_DOMAIN}\r\nSubject: twenty megabytes\r\nContent-Type: text/plain\r\n\r\n${`${'x'.repeat(998)}\r\n`.repeat(20 * 1024)}`;
      await appendAll(imap(), inbox, [
        fixture('rfc3464-no-verp.eml'),
        withToken(POSTFIX.file, POSTFIX.token, mismatched).toString('latin1').replace('Subject: Mail revenu', 'Subject: Mismatch Mail revenu'),
        withToken(POSTFIX.file, POSTFIX.token, newToken()).toString('latin1').replace('Subject: Mail revenu', 'Subject: Unknown token Mail revenu'),
        'From: a@example.com\r\nTo: b@example.com\r\nSubject: just a reply from a person\r\n\r\nThanks!\r\n',
        big,
      ]);
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: imapPort() });
      const { log, lines } = memoryLog();
      const mailbox = mailboxFor(notify(), { url: mailboxUrl({ folder: inbox, port: proxy.port }), processedFolder: done, log });
      try {
        assert.deepEqual(await mailbox.poll(), { processed: 0, skipped: 5, failed: 0 });
        assert.ok(proxy.bytesFromTarget < 1024 * 1024, `only the small messages crossed the wire (${proxy.bytesFromTarget} bytes)`);
        const left = await folderMessages(imap(), inbox);
        assert.deepEqual(
          left.map((m) => m.subject),
          ['Returned mail: Cannot send message for 5 days', 'Mismatch Mail revenu en erreur / Undelivered Mail Returned to Sender', 'Unknown token Mail revenu en erreur / Undelivered Mail Returned to Sender', 'just a reply from a person', 'twenty megabytes'],
        );
        assert.ok(left.every((m) => m.flags.includes(UNREADABLE_FLAG)));
        const reasons = lines.filter((l) => l.msg === 'bounce mailbox message left in the mailbox, not applied').map((l) => String(l.reason));
        assert.match(reasons[0]!, /no VERP return path bounces\+<token>@bounce\.test/);
        assert.match(reasons[1]!, /names no recipient of its send/);
        assert.match(reasons[2]!, /names no send/);
        assert.match(reasons[3]!, /Not a delivery status notification or feedback report/);
        assert.match(reasons[4]!, /larger than 10485760 bytes/);
        assert.equal((await notify().contacts.get('someone-else@domain.com'))?.status, 'subscribed');
        assert.deepEqual(await folderMessages(imap(), done), []);

        const before = lines.length;
        assert.deepEqual(await mailbox.poll(), { processed: 0, skipped: 0, failed: 0 }, 'flagged messages are not read again');
        assert.equal(lines.filter((l, i) => i >= before && l.level >= 40).length, 0);
      } finally {
        await mailbox.close();
        await proxy.close();
      }
    });

    test('a mailbox that goes away mid-poll: the error is logged, nothing is lost, the next poll resumes and applies nothing twice', async () => {
      const { inbox, done } = await freshFolders(imap());
      const reports = REAL_REPORTS.slice(1, 4);
      const sends: { token: string; id: number }[] = [];
      for (const r of reports) {
        const token = newToken();
        sends.push({ token, ...(await sendWithToken(notify(), `gone-${r.to}`.replace(/@.*/, '@away.example'), token, `<${token}@notify.test>`)) });
      }
      // The reports name their own recipients; these sends went to other addresses, so rewrite both.
      await appendAll(
        imap(),
        inbox,
        reports.map((r, i) => withToken(r.file, r.token, sends[i]!.token).toString('latin1').replaceAll(r.to, `gone-${r.to}`.replace(/@.*/, '@away.example'))),
      );
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: imapPort() });
      const { log, lines } = memoryLog();
      let applies = 0;
      const mailbox = createBounceMailbox({
        url: mailboxUrl({ folder: inbox, port: proxy.port }),
        processedFolder: done,
        bounceDomain: BOUNCE_DOMAIN,
        log,
        timeoutMs: 5_000,
        lookupSend: (token) => notify().context.store.sends.getByToken(token),
        apply: async (events, receipt) => {
          const out = await applyWebhookEvents(notify().context, 'bounce-mailbox', events, receipt.id);
          if (++applies === 1) await proxy.cut();
          return out;
        },
      });
      try {
        await assert.rejects(mailbox.poll(), (err) => isNotifyError(err, 'STORE_UNAVAILABLE') && /went away during a poll/.test(err.message));
        assert.ok(lines.some((l) => l.level === 50 && l.msg.startsWith('bounce mailbox went away during a poll')));
        assert.equal((await folderMessages(imap(), inbox)).length, 3, 'every message is still in the folder');

        await proxy.restore();
        assert.deepEqual(await mailbox.poll(), { processed: 3, skipped: 0, failed: 0 });
        assert.deepEqual(await folderMessages(imap(), inbox), []);
        assert.equal((await folderMessages(imap(), done)).length, 3);
        for (const s of sends) {
          const rows = await notify().context.store.db.selectFrom('notify_events').select('type').where('send_id', '=', s.id).execute();
          assert.deepEqual(
            rows.map((r) => r.type),
            ['bounce'],
            'one bounce per send, though the first report was read twice',
          );
        }
      } finally {
        await mailbox.close();
        await proxy.close();
      }
    });

    test('when applying fails (database down), the report stays unflagged and the next poll applies it', async () => {
      const { inbox, done } = await freshFolders(imap());
      const token = newToken();
      const send = await sendWithToken(notify(), 'retry@domain.com', token, `<${token}@notify.test>`);
      await appendAll(imap(), inbox, [withToken(POSTFIX.file, POSTFIX.token, token).toString('latin1').replaceAll(POSTFIX.to, 'retry@domain.com')]);
      let down = true;
      const mailbox = mailboxFor(notify(), {
        url: mailboxUrl({ folder: inbox }),
        processedFolder: done,
        apply: async (events, receipt) => {
          if (down) throw new Error('connection terminated');
          return applyWebhookEvents(notify().context, 'bounce-mailbox', events, receipt.id);
        },
      });
      assert.deepEqual(await mailbox.poll(), { processed: 0, skipped: 0, failed: 1 });
      assert.deepEqual(
        (await folderMessages(imap(), inbox)).map((m) => m.flags.includes(UNREADABLE_FLAG)),
        [false],
      );
      down = false;
      assert.deepEqual(await mailbox.poll(), { processed: 1, skipped: 0, failed: 0 });
      assert.equal((await notify().contacts.get('retry@domain.com'))?.status, 'bounced');
      const rows = await notify().context.store.db.selectFrom('notify_events').select('type').where('send_id', '=', send.id).execute();
      assert.deepEqual(
        rows.map((r) => r.type),
        ['bounce'],
      );
      await mailbox.close();
    });
  });

  describe('connection and configuration problems', () => {
    const noStore = { lookupSend: async () => undefined, apply: async () => undefined, bounceDomain: BOUNCE_DOMAIN, timeoutMs: 3_000 };

    test('a wrong password: CONFIG_INVALID naming the mailbox, never the password', async () => {
      const mailbox = createBounceMailbox({ ...noStore, url: mailboxUrl({ pass: 'wrong-secret-123' }) });
      await assert.rejects(mailbox.poll(), (err) => isNotifyError(err, 'CONFIG_INVALID') && /login failed for notify@127\.0\.0\.1/.test(err.message) && !err.message.includes('wrong-secret-123'));
      await mailbox.close();
    });

    test('nothing listening: STORE_UNAVAILABLE', async () => {
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: imapPort() });
      await proxy.cut();
      const mailbox = createBounceMailbox({ ...noStore, url: mailboxUrl({ port: proxy.port }) });
      await assert.rejects(mailbox.poll(), (err) => isNotifyError(err, 'STORE_UNAVAILABLE') && /unreachable/.test(err.message));
      await mailbox.close();
    });

    test('a folder that does not exist: CONFIG_INVALID naming it', async () => {
      const mailbox = createBounceMailbox({ ...noStore, url: mailboxUrl({ folder: 'no-such-folder' }) });
      await assert.rejects(mailbox.poll(), (err) => isNotifyError(err, 'CONFIG_INVALID') && /"no-such-folder" cannot be opened/.test(err.message));
      await mailbox.close();
    });

    test('the default processed folder is notify-processed; two polls at once are one poll; a closed mailbox refuses', async () => {
      const mailbox = createBounceMailbox({ ...noStore, url: mailboxUrl({ folder: (await freshFolders(imap())).inbox }) });
      const [a, b] = [mailbox.poll(), mailbox.poll()];
      assert.equal(a, b);
      assert.deepEqual(await a, { processed: 0, skipped: 0, failed: 0 });
      assert.ok((await imap().list()).some((f) => f.path === 'notify-processed'));
      await mailbox.close();
      await assert.rejects(mailbox.poll(), (err) => isNotifyError(err, 'CLOSED'));
    });
  });
});

describe('bounce mailbox options', () => {
  const base = { lookupSend: async () => undefined, apply: async () => undefined, bounceDomain: BOUNCE_DOMAIN };
  const bad: [string, string, RegExp][] = [
    ['not a URL', 'imap-server', /not a URL/],
    ['another scheme', 'pop3://u:p@host/INBOX', /imaps:\/\/ or imap:\/\//],
    ['no password', 'imaps://user@host/INBOX', /user and a password/],
  ];
  for (const [what, url, message] of bad) {
    test(`${what}: CONFIG_INVALID at creation`, () => {
      assert.throws(() => createBounceMailbox({ ...base, url }), (err) => isNotifyError(err, 'CONFIG_INVALID') && message.test(err.message));
    });
  }
  test('a bounceDomain that is no domain: CONFIG_INVALID', () => {
    assert.throws(() => createBounceMailbox({ ...base, url: 'imaps://u:p@host/INBOX', bounceDomain: 'bounce test>' }), (err) => isNotifyError(err, 'CONFIG_INVALID'));
  });
});
