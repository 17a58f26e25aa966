import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { verpAddress } from '../../src/bounces/index.ts';
import { newToken } from '../../src/core/tokens.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { BOUNCE_DOMAIN } from './helpers.ts';
import { folderMessages, mailboxFor, mailboxUrl, NO_IMAP, sendWithToken, useImapClient } from './imap.ts';

/**
 * The local Postfix of scripts/imap-test-server.sh: it accepts mail for unknown local users, then
 * its local delivery agent bounces it, and its DSN goes to the VERP return path, which it delivers
 * into the test mailbox's INBOX.
 */
const POSTFIX_URL = process.env.NOTIFY_TEST_POSTFIX_URL;
const SKIP = NO_IMAP || (POSTFIX_URL ? false : 'NOTIFY_TEST_POSTFIX_URL is not set (scripts/imap-test-server.sh postfix-url)');

describe('a DSN written by a real Postfix', { skip: SKIP }, () => {
  const imap = useImapClient();

  forEachEngine('Postfix bounce for an unknown local user', (h) => {
    const notify = useNotify(h);

    test('sent with the VERP return path, bounced by Postfix, read from the mailbox and applied to its send', async () => {
      const token = newToken();
      const to = `nouser-${randomBytes(4).toString('hex')}@mta.notify.test`;
      const messageId = `<${token}@notify.test>`;
      const send = await sendWithToken(notify(), to, token, messageId);
      const smtp = nodemailer.createTransport({ url: POSTFIX_URL, ignoreTLS: true });
      try {
        await smtp.sendMail({ envelope: { from: verpAddress(token, BOUNCE_DOMAIN), to }, from: 'news@example.com', to, subject: 'Hello from notify', text: 'Hi', messageId });
      } finally {
        smtp.close();
      }
      await waitForDsn(imap(), token);

      const done = `postfix-${randomBytes(4).toString('hex')}`;
      const mailbox = mailboxFor(notify(), { url: mailboxUrl({ folder: 'INBOX' }), processedFolder: done });
      try {
        const result = await mailbox.poll();
        assert.equal(result.processed, 1);
        assert.equal(result.failed, 0);
      } finally {
        await mailbox.close();
      }
      assert.equal((await notify().contacts.get(to))?.status, 'bounced');
      const rows = await notify().context.store.db.selectFrom('notify_events').select(['type', 'metadata']).where('send_id', '=', send.id).execute();
      assert.deepEqual(
        rows.map((r) => r.type),
        ['bounce'],
      );
      assert.match(JSON.stringify(rows[0]!.metadata), /bounce-mailbox/, 'the provider recorded is the bounce mailbox');
      assert.deepEqual(
        (await folderMessages(imap(), done)).map((m) => m.subject),
        ['Undelivered Mail Returned to Sender'],
      );
    });
  });
});

/** Postfix delivers asynchronously: wait (at most 30 s) until the DSN for this token is in INBOX. */
async function waitForDsn(client: ImapFlow, token: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const lock = await client.getMailboxLock('INBOX');
    try {
      const found = await client.search({ header: { 'x-original-to': token } }, { uid: true });
      if (found && found.length > 0) return;
    } finally {
      lock.release();
      await client.mailboxClose();
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail(`no DSN for ${token} reached INBOX within 30 s (see the Postfix log in the test server's folder)`);
}
