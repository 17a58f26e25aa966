import { isNotifyError } from '../errors.ts';

/** Why a delivery failed, and whether trying again later may succeed. */
export interface Failure {
  transient: boolean;
  /**
   * The server itself said the message will never pass (an SMTP 5xx reply, an HTTP 4xx other than
   * 408/429). Neither transient nor final: a failure nothing here recognises (a mailer that returned
   * false or threw something of its own), which a drip step still tries again.
   */
  final: boolean;
  reason: string;
}

/** Node's codes, and the SMTP client's (nodemailer's names), for a connection that could not be made or went away. */
const CONNECTION_CODES = new Set(['ECONNECTION', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ESOCKET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EDNS']);
/** Provider error names for "slow down" (AWS SES v1 `Throttling`, SESv2 and SDK exceptions). */
const THROTTLING = new Set(['Throttling', 'ThrottlingException', 'TooManyRequestsException', 'TooManyRequests']);

interface ErrorFields {
  code?: unknown;
  name?: unknown;
  responseCode?: unknown;
  status?: unknown;
  statusCode?: unknown;
  details?: { status?: unknown };
  $metadata?: { httpStatusCode?: unknown };
  cause?: unknown;
}

/**
 * Transient: an SMTP 4xx reply, a connection refused, reset, timed out or closed, provider
 * throttling (a throttling error name, HTTP 429) or a provider's 5xx answer. Permanent: an SMTP 5xx
 * reply, any other HTTP answer, a message the mailer refused, and notify's own refusals (header
 * injection, a template that does not render, a missing sender). An error nothing here recognises
 * is permanent: trying it again could deliver a message the provider already took.
 */
export function classifyFailure(err: unknown): Failure {
  // a throttling name beats its status (SDKs answer ThrottlingException with HTTP 400)
  const transient = isTransient(err, 0);
  return { transient, final: !transient && isFinal(err, 0), reason: reasonOf(err) };
}

export const REFUSED: Failure = { transient: false, final: false, reason: 'mailer returned false' };

function isTransient(err: unknown, depth: number): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const e = err as ErrorFields;
  // an SMTP reply says it all: 4yz is "try again later" (RFC 5321 4.2.1), 5yz is final
  if (typeof e.responseCode === 'number') return e.responseCode >= 400 && e.responseCode < 500;
  if (CONNECTION_CODES.has(String(e.code))) return true;
  if (THROTTLING.has(String(e.name)) || THROTTLING.has(String(e.code))) return true;
  const status = Number(e.details?.status ?? e.$metadata?.httpStatusCode ?? e.statusCode ?? e.status);
  if (status === 429 || (status >= 500 && status < 600)) return true;
  return isTransient(e.cause, depth + 1);
}

function isFinal(err: unknown, depth: number): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const e = err as ErrorFields;
  if (typeof e.responseCode === 'number') return e.responseCode >= 500 && e.responseCode < 600;
  const status = Number(e.details?.status ?? e.$metadata?.httpStatusCode ?? e.statusCode ?? e.status);
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return true;
  return isFinal(e.cause, depth + 1);
}

function reasonOf(err: unknown): string {
  const reason = isNotifyError(err) ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err);
  return reason.slice(0, 500);
}
