import { isNotifyError } from '../errors.ts';

/**
 * Seconds a client is told to wait (Retry-After) when the database could not serve its request: a
 * database that is unreachable, or whose write lock another process held past the busy timeout
 * (SQLite: a long import, a migration). Likely over within seconds, unlike a mailer or a
 * configuration the operator must fix.
 */
export const STORE_RETRY_AFTER_SEC = 5;

/** The request failed because the database did, not because of what it asked. */
export function isStoreUnavailable(err: unknown, store: { dialect: { isConnectionError(err: unknown): boolean } }): boolean {
  return isNotifyError(err, 'STORE_UNAVAILABLE') || store.dialect.isConnectionError(err);
}
