import { isNotifyError, NotifyError } from './errors.ts';

export interface ApiGuard {
  /**
   * The operation as the API exposes it: refused (CLOSED) once the instance is closed, and a lost
   * database connection reported as STORE_UNAVAILABLE (the driver's own error stays as the cause)
   * rather than a bare socket error.
   */
  wrap<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
  /** marks the instance closed; false when it already was (close() runs its work once) */
  close(): boolean;
}

export function createApiGuard(isConnectionError: (err: unknown) => boolean): ApiGuard {
  let closed = false;
  return {
    wrap:
      (fn) =>
      async (...args) => {
        if (closed) throw new NotifyError('CLOSED');
        try {
          return await fn(...args);
        } catch (err) {
          if (!isNotifyError(err) && isConnectionError(err)) {
            throw new NotifyError('STORE_UNAVAILABLE', `Database is unavailable: ${(err as Error).message || String(err)}`, {}, { cause: err });
          }
          throw err;
        }
      },
    close() {
      if (closed) return false;
      closed = true;
      return true;
    },
  };
}
