/**
 * The Mailer contract is the domain's (core/mailer.ts); implementations live beside this file
 * (smtp.ts, outbox.ts, log.ts, ses.ts).
 */
export type { Mailer, MailResult, OutgoingMessage } from '../core/mailer.ts';
