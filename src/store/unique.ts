import { NotifyError } from '../errors.ts';
import type { StoreDialect } from './dialect.ts';

/**
 * Runs a write whose unique violation is the caller's mistake (a name taken, a pair that exists):
 * it becomes NotifyError('DUPLICATE') with `message`, so no caller needs to know the engine's codes.
 */
export async function refuseDuplicate<T>(dialect: Pick<StoreDialect, 'isUniqueViolation'>, write: () => Promise<T>, message: string, details: Record<string, unknown>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (dialect.isUniqueViolation(err)) throw new NotifyError('DUPLICATE', message, details, { cause: err });
    throw err;
  }
}
