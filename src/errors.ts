/** Every error the library raises on purpose carries one of these codes. */
export const ErrorCodes = {
  CONFIG_INVALID: 'Configuration value is invalid',
  CONFIG_FILE: 'Configuration file could not be read',
  NOT_FOUND: 'Record not found',
  INVALID_INPUT: 'Input is invalid',
  INVALID_EMAIL: 'Email address is invalid',
  HEADER_INJECTION: 'Header value contains CR or LF',
  MISSING_SENDER: 'No from address configured',
  TEMPLATE_ERROR: 'Template could not be rendered',
  PATH_ESCAPE: 'Path escapes its base directory',
  SUPPRESSED: 'Contact is suppressed',
  DUPLICATE: 'Record already exists',
  INVALID_STATE: 'Not allowed in the current status',
  EMPTY_AUDIENCE: 'Campaign audience is empty',
  MAILER_FAILED: 'Mailer failed',
  NOT_RELEASED: 'Message held back: its send was not committed as started',
  SMTPUTF8_REQUIRED: 'A non-ASCII local part needs a server that offers SMTPUTF8',
  STORE_UNAVAILABLE: 'Database is unavailable',
  WEBHOOK_DRIVER: 'Webhook driver problem',
  CLOSED: 'Notify instance is closed',
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

export class NotifyError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message ?? ErrorCodes[code], options);
    this.name = 'NotifyError';
    this.code = code;
    this.details = details;
  }
}

export function isNotifyError(err: unknown, code?: ErrorCode): err is NotifyError {
  return err instanceof NotifyError && (code === undefined || err.code === code);
}
