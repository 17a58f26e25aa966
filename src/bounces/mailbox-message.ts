import { createHash } from 'node:crypto';
import type { ImapFlow } from 'imapflow';
import { reportEvents, reportToken, type SendRef } from './events.ts';
import { type BounceMailboxOptions, type MailboxLog, type Outcome, PROCESSED_FOLDER, UNREADABLE_FLAG } from './mailbox-contract.ts';
import { type BounceReport, parseReport } from './report.ts';

/** IMAP failures propagate (the poll ends); store failures count as `failed` and the message stays. */
export async function handleMessage(client: ImapFlow, uid: number, size: number, options: BounceMailboxOptions, log: MailboxLog): Promise<Outcome> {
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
