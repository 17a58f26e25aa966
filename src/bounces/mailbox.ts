import { createHash } from 'node:crypto';
import { ImapFlow } from 'imapflow';
import { isNotifyError, NotifyError } from '../errors.ts';
import type { ParsedWebhookEvent } from '../webhooks/contract.ts';
import { reportEvents, reportToken, type SendRef } from './events.ts';
import { type MailboxTarget, parseMailboxUrl } from './mailbox-url.ts';
import { type BounceReport, parseReport } from './report.ts';

/** Where processed reports go unless told otherwise; created when missing. */
export const PROCESSED_FOLDER = 'notify-processed';
/** The keyword a message the mailbox cannot use gets, so later polls leave it for a person. */
export const UNREADABLE_FLAG = '$NotifyUnreadable';

/** What `apply` learns besides the events: the report it came from and the send token it named. */
export interface BounceReceipt {
  /** the report's Message-ID, or a hash of its bytes when it has none (the events' ids start with it) */
  id: string;
  token: string;
  uid: number;
}

/** A pino-style logger; the mailbox logs what it leaves alone and why. */
export interface MailboxLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface BounceMailboxOptions {
  /** imaps://user:pass@host:993/INBOX (imap:// for tests) */
  url: string;
  /** the domain of the VERP return path bounces+<send token>@<bounceDomain> */
  bounceDomain: string;
  /** the send a token names (its address and Message-ID), undefined when there is none */
  lookupSend(token: string): Promise<SendRef | undefined>;
  /** applies the events exactly as webhook events are applied; a throw leaves the report for the next poll */
  apply(events: ParsedWebhookEvent[], receipt: BounceReceipt): Promise<unknown>;
  log?: MailboxLog;
  /** messages larger than this (IMAP RFC822.SIZE) are never downloaded; default 10 MiB */
  maxMessageBytes?: number;
  /** where processed reports are moved (created when missing); default notify-processed */
  processedFolder?: string;
  /** messages read per poll (oldest first); the rest wait for the next poll; default 200 */
  batchSize?: number;
  /** connect and greeting time limit; default 30 s */
  timeoutMs?: number;
}

export interface PollResult {
  /** reports applied (or read and calling for no event) and moved to notify-processed */
  processed: number;
  /** messages left in the mailbox for a person, flagged so later polls skip them */
  skipped: number;
  /** messages whose send lookup or apply failed: left unflagged, tried again next poll */
  failed: number;
}

export interface BounceMailbox {
  /** One pass over the mailbox. A poll already running is shared, not doubled. */
  poll(): Promise<PollResult>;
  close(): Promise<void>;
}

type Outcome = keyof PollResult;
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
    client = await connect(target, options.timeoutMs ?? 30_000, log);
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

async function connect(target: MailboxTarget, timeoutMs: number, log: MailboxLog): Promise<ImapFlow> {
  const client = new ImapFlow({
    host: target.host,
    port: target.port,
    secure: target.secure,
    auth: { user: target.user, pass: target.pass },
    logger: false,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    disableAutoIdle: true,
  });
  // A dropped connection also surfaces as a rejected command; this keeps it from being an uncaught 'error'.
  client.on('error', (err: Error) => log.warn({ err, mailbox: target.label }, 'bounce mailbox connection error'));
  try {
    await client.connect();
    return client;
  } catch (err) {
    client.close();
    const e = err as { authenticationFailed?: boolean; responseText?: string; message?: string };
    if (e.authenticationFailed) {
      throw new NotifyError('CONFIG_INVALID', `Bounce mailbox login failed for ${target.label}: ${e.responseText || e.message}`, { mailbox: target.label }, { cause: err });
    }
    throw new NotifyError('STORE_UNAVAILABLE', `Bounce mailbox ${target.label} is unreachable: ${e.message}`, { mailbox: target.label }, { cause: err });
  }
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

/** IMAP failures propagate (the poll ends); store failures count as `failed` and the message stays. */
async function handleMessage(client: ImapFlow, uid: number, size: number, options: BounceMailboxOptions, log: MailboxLog): Promise<Outcome> {
  const leave = async (reason: string, extra: object = {}): Promise<Outcome> => {
    log.warn({ uid, reason, ...extra }, 'bounce mailbox message left in the mailbox, not applied');
    await client.messageFlagsAdd(String(uid), [UNREADABLE_FLAG], { uid: true });
    return 'skipped';
  };
  const max = options.maxMessageBytes ?? 10 * 1024 * 1024;
  if (size > max) return leave(`larger than ${max} bytes (${size})`, { size });
  const message = await client.fetchOne(String(uid), { uid: true, source: true }, { uid: true });
  if (!message || !message.source) return 'failed';
  let report: BounceReport;
  try {
    report = await parseReport(message.source);
  } catch (err) {
    return leave((err as Error).message);
  }
  const token = reportToken(report, options.bounceDomain);
  if (!token) return leave(`no VERP return path bounces+<token>@${options.bounceDomain} in the report`, { reportId: report.messageId });
  let send: SendRef | undefined;
  try {
    send = await options.lookupSend(token);
  } catch (err) {
    log.error({ err, uid, token }, 'bounce mailbox could not look up the send; the report stays for the next poll');
    return 'failed';
  }
  if (!send) return leave('the VERP token names no send', { token });
  const receiptId = report.messageId ?? `sha256:${createHash('sha256').update(message.source).digest('hex')}`;
  const outcome = reportEvents(report, send, receiptId);
  if (outcome.mismatched.length > 0) {
    log.warn({ uid, token, reported: outcome.mismatched, sentTo: send.to_email }, 'bounce report names a recipient its send did not go to; not applied for that recipient');
  }
  if (outcome.events.length === 0 && outcome.ignored.length === 0) return leave('the report names no recipient of its send', { token });
  if (outcome.events.length > 0) {
    try {
      await options.apply(outcome.events, { id: receiptId, token, uid });
    } catch (err) {
      log.error({ err, uid, token }, 'bounce mailbox could not apply a report; it stays for the next poll');
      return 'failed';
    }
  }
  if (outcome.ignored.length > 0) log.info({ uid, token, ignored: outcome.ignored }, 'bounce report read; nothing to apply for these recipients');
  await client.messageMove(String(uid), options.processedFolder ?? PROCESSED_FOLDER, { uid: true });
  return 'processed';
}
