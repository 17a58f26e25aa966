import type { ParsedWebhookEvent } from '../webhooks/contract.ts';
import type { SendRef } from './events.ts';

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

export type Outcome = keyof PollResult;
