export { deliveryEventType, type ReportOutcome, reportEvents, reportToken, type SendRef } from './events.ts';
export { createBounceMailbox } from './mailbox.ts';
export {
  type BounceMailbox,
  type BounceMailboxOptions,
  type BounceReceipt,
  type MailboxLog,
  PROCESSED_FOLDER,
  type PollResult,
  UNREADABLE_FLAG,
} from './mailbox-contract.ts';
export { type MailboxTarget, parseMailboxUrl } from './mailbox-url.ts';
export { type BounceReport, type DeliveryRecipient, type FeedbackReport, parseReport } from './report.ts';
export { verpAddress, verpToken } from './verp.ts';
