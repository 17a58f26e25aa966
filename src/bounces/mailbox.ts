import type { ImapFlow } from 'imapflow';
import { isNotifyError, NotifyError } from '../errors.ts';
import { type BounceMailbox, type BounceMailboxOptions, type MailboxLog, type Outcome, PROCESSED_FOLDER, type PollResult, UNREADABLE_FLAG } from './mailbox-contract.ts';
import { connectMailbox } from './mailbox-connect.ts';
import { handleMessage } from './mailbox-message.ts';
import { type MailboxTarget, parseMailboxUrl } from './mailbox-url.ts';

const SILENT: MailboxLog = { info() {}, warn() {}, error() {} };

/**
 * The bounce mailbox: each poll connects, reads the folder's messages in UID order, applies the
 * delivery status notifications and feedback reports it can map to a send, moves them to
 * `notify-processed`, and leaves everything else where it is (logged and flagged). Nothing is
 * deleted; a poll interrupted at any point leaves every message it had not moved in place, and a
 * report read twice is applied once (its events carry stable ids for the webhook receipts).
 */
export function createBounceMailbox(options: BounceMailboxOptions): BounceMailbox {
  const target = parseMailboxUrl(options.url);
  if (!options.bounceDomain || !/^[A-Za-z0-9.-]+$/.test(options.bounceDomain)) {
    throw new NotifyError('CONFIG_INVALID', `bounceDomain must be a domain name, not ${JSON.stringify(options.bounceDomain)}`);
  }
  const log = options.log ?? SILENT;
  let running: Promise<PollResult> | undefined;
  let client: ImapFlow | undefined;
  let closed = false;

  const pollOnce = async (): Promise<PollResult> => {
    const result: PollResult = { processed: 0, skipped: 0, failed: 0 };
    client = await connectMailbox(target, options.timeoutMs ?? 30_000, log);
    try {
      await readFolder(client, target, options, log, result);
      await client.logout();
      return result;
    } catch (err) {
      client.close();
      if (isNotifyError(err)) throw err;
      log.error({ err, mailbox: target.label, ...result }, 'bounce mailbox went away during a poll; unread messages stay for the next poll');
      throw new NotifyError('STORE_UNAVAILABLE', `Bounce mailbox ${target.label} went away during a poll: ${(err as Error).message}`, { ...result }, { cause: err });
    } finally {
      client = undefined;
    }
  };

  return {
    poll() {
      if (closed) return Promise.reject(new NotifyError('CLOSED', 'The bounce mailbox is closed'));
      running ??= pollOnce().finally(() => {
        running = undefined;
      });
      return running;
    },
    async close() {
      closed = true;
      client?.close();
      await running?.catch(() => {});
    },
  };
}

async function readFolder(client: ImapFlow, target: MailboxTarget, options: BounceMailboxOptions, log: MailboxLog, result: PollResult): Promise<void> {
  await client.mailboxCreate(options.processedFolder ?? PROCESSED_FOLDER);
  const lock = await client.getMailboxLock(target.path).catch((err: Error) => {
    throw new NotifyError('CONFIG_INVALID', `Bounce mailbox folder ${JSON.stringify(target.path)} cannot be opened: ${err.message}`, { mailbox: target.label }, { cause: err });
  });
  try {
    const found = (await client.search({ unKeyword: UNREADABLE_FLAG, deleted: false }, { uid: true })) || [];
    const uids = [...found].sort((a, b) => a - b).slice(0, options.batchSize ?? 200);
    if (uids.length === 0) return;
    const sizes = new Map<number, number>();
    for (const m of await client.fetchAll(uids.join(','), { uid: true, size: true }, { uid: true })) sizes.set(m.uid, m.size ?? 0);
    for (const uid of uids) {
      if (!sizes.has(uid)) continue; // expunged by someone else meanwhile
      const outcome: Outcome = await handleMessage(client, uid, sizes.get(uid)!, options, log);
      result[outcome]++;
    }
  } finally {
    lock.release();
  }
}
