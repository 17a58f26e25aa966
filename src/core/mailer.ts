import { NotifyError } from '../errors.ts';
import type { Personalized } from '../render/personalize.ts';

/**
 * The Mailer contract. Implementations live in src/mail/ (smtp, outbox, log, ses); an application
 * may pass any object with this shape as the `mailer` option. A mailer that returns false or
 * throws is a failed send.
 */
export interface OutgoingMessage {
  /** formatted From header value, e.g. `"News" <news@example.com>` */
  from: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  html?: string;
  text?: string;
  /** extra headers, already checked free of CR/LF; List-Unsubscribe lives here */
  headers: Record<string, string>;
  /** the per-send token (appears in tracking URLs); useful for logs and provider tags */
  sendToken: string;
  /** complete RFC 5322 message when the dispatcher pre-built it; a mailer may send it as-is */
  raw?: Buffer;
  /**
   * the same bytes as `raw`, as buffers to write in order (the dispatcher's messages have it; the
   * buffers are shared between recipients: never write to them). Reading `raw` joins them.
   */
  readonly rawParts?: readonly Buffer[];
  /** the Message-ID header value inside `raw` (angle brackets included) */
  messageId?: string;
  /**
   * the envelope sender (SMTP MAIL FROM, where bounces go); default the From address. With a bounce
   * mailbox it is the send's VERP address.
   */
  envelopeFrom?: string;
}

export interface MailResult {
  /** provider or SMTP message id, used to match bounce webhooks to sends */
  messageId?: string;
}

export interface Mailer {
  readonly name: string;
  send(message: OutgoingMessage): Promise<MailResult | boolean>;
  /**
   * Optional: `send`, except that the provider cannot accept the message before `ready` resolves
   * true. The work before that point (the envelope, the body) may overlap whatever `ready` waits
   * for (the commit that marks the send started); `false` or a rejection abandons the message
   * untaken (a `NOT_RELEASED` error, or the rejection). Without it, `send` is called only after
   * `ready`.
   */
  sendWhen?(message: OutgoingMessage, ready: Promise<boolean>): Promise<MailResult | boolean>;
  /** how many messages it carries at once (an SMTP pool's connections); the delivery loop's pool follows it */
  readonly concurrency?: number;
  close?(): Promise<void>;
}

/** One recipient's message as the domain describes it: addresses, headers and the filled-in bodies. */
export interface PersonalMessage {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  /** epoch ms for the Date header */
  date: number;
  /** custom and List-Unsubscribe headers, values free of CR/LF */
  headers: Record<string, string>;
  sendToken: string;
  /** the compiled bodies with this recipient's values */
  content: Personalized;
}

/** Turns one recipient's message into what a Mailer sends (the complete MIME message in `raw`). */
export type MessageComposer = (message: PersonalMessage) => OutgoingMessage;

/**
 * Made once per compiled message by the mail layer (src/mail/message.ts), so what every recipient
 * shares (the MIME framing) is built once, not per recipient.
 */
export type ComposerFactory = (multipart: boolean) => MessageComposer;

/**
 * The error of a message a mailer held back because `ready` (Mailer.sendWhen) said false, or
 * because the start it waited for could not be written (`cause`): one code, so callers tell it
 * from a delivery failure wherever it was raised.
 */
export function heldBack(cause?: unknown): NotifyError {
  if (cause === undefined) return new NotifyError('NOT_RELEASED', 'The message was held back: its send was not committed as started');
  return new NotifyError('NOT_RELEASED', 'The message was held back: its start could not be written', {}, { cause });
}
