import type { Config } from '../config.ts';
import { minutes } from './clock.ts';
import type { SendOutcome } from './storage/sends.ts';

type RetryConfig = Pick<Config, 'maxRetries' | 'retryBackoffMinutes'>;

/**
 * A failed campaign send that may pass if tried later (SMTP 4xx, a lost connection, provider
 * throttling) waits as `deferred`; after `maxRetries` attempts, or for a failure that will not pass
 * (SMTP 5xx), it is `failed`. `attempt` is the 1-based attempt that produced the outcome.
 */
export function settleOutcome(outcome: SendOutcome, attempt: number, config: RetryConfig, now: number): SendOutcome {
  if (outcome.status !== 'failed' || !outcome.transient) return outcome;
  return deferOrFail(outcome, attempt, config.maxRetries, now + retryDelay(attempt, config.retryBackoffMinutes));
}

/**
 * A drip step's attempt: a transient failure is deferred by the same backoff as a campaign send and
 * an SMTP 5xx is failed at once; a failure nothing recognises (the mailer returned false or threw an
 * error of its own) keeps the drip rule of the spec, tried again `retryDelayMinutes` later. Each
 * until the attempt that reaches `maxRetries`.
 */
export function settleStepOutcome(outcome: SendOutcome, attempt: number, config: RetryConfig & Pick<Config, 'retryDelayMinutes'>, now: number): SendOutcome {
  if (outcome.status !== 'failed' || outcome.final) return outcome;
  if (outcome.transient) return settleOutcome(outcome, attempt, config, now);
  return deferOrFail(outcome, attempt, config.maxRetries, now + Math.round(minutes(config.retryDelayMinutes)));
}

function deferOrFail(outcome: SendOutcome, attempt: number, maxRetries: number, nextAttemptAt: number): SendOutcome {
  if (attempt >= maxRetries) return { ...outcome, error: `${outcome.error ?? 'failed'} (attempt ${attempt} of ${maxRetries}; no more retries)` };
  return { ...outcome, status: 'deferred', next_attempt_at: nextAttemptAt };
}

/** the wait after the `attempt`-th failed attempt: the backoff's entry for it, its last entry after that */
export function retryDelay(attempt: number, backoffMinutes: readonly number[]): number {
  return Math.round(minutes(backoffMinutes[Math.min(attempt, backoffMinutes.length) - 1]));
}
