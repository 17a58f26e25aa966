import type { Config } from '../config.ts';
import { minutes } from './clock.ts';
import type { SendOutcome } from './storage/sends.ts';

/**
 * A failed campaign send that may pass if tried later (SMTP 4xx, a lost connection, provider
 * throttling) waits as `deferred`; after `maxRetries` attempts, or for a failure that will not pass
 * (SMTP 5xx), it is `failed`. `attempt` is the 1-based attempt that produced the outcome.
 */
export function settleOutcome(outcome: SendOutcome, attempt: number, config: Pick<Config, 'maxRetries' | 'retryBackoffMinutes'>, now: number): SendOutcome {
  if (outcome.status !== 'failed' || !outcome.transient) return outcome;
  if (attempt >= config.maxRetries) return { ...outcome, error: `${outcome.error ?? 'failed'} (attempt ${attempt} of ${config.maxRetries}; no more retries)` };
  return { ...outcome, status: 'deferred', next_attempt_at: now + retryDelay(attempt, config.retryBackoffMinutes) };
}

/** the wait after the `attempt`-th failed attempt: the backoff's entry for it, its last entry after that */
export function retryDelay(attempt: number, backoffMinutes: readonly number[]): number {
  return Math.round(minutes(backoffMinutes[Math.min(attempt, backoffMinutes.length) - 1]));
}
