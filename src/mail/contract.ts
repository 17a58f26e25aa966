/**
 * The Mailer contract. Implementations live beside this file (smtp.ts, outbox.ts, log.ts, ses.ts);
 * an application may pass any object with this shape as the `mailer` option.
 * A mailer that returns false or throws is a failed send.
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
  /** the Message-ID header value inside `raw` (angle brackets included) */
  messageId?: string;
}

export interface MailResult {
  /** provider or SMTP message id, used to match bounce webhooks to sends */
  messageId?: string;
}

export interface Mailer {
  readonly name: string;
  send(message: OutgoingMessage): Promise<MailResult | boolean>;
  close?(): Promise<void>;
}
