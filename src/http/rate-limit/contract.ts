/**
 * The rate-limit contract. One store per instance (`rateLimitStore`), any number of rules on it.
 * Implementations beside this file: memory.ts (per process), redis.ts and database.ts (shared by
 * every instance pointed at the same server, so the limit holds across a fleet).
 */
export interface LimitRule {
  /** namespace of the rule's keys, e.g. `capture:ip` */
  name: string;
  /** hits allowed per window; the (points+1)th is refused */
  points: number;
  windowSec: number;
}

export interface LimitDecision {
  allowed: boolean;
  /** hits left in this window */
  remaining: number;
  /** seconds until the window ends (for Retry-After), at least 1 when refused */
  retryAfterSec: number;
}

export interface Limiter {
  readonly rule: LimitRule;
  /** counts one hit for `key` and says whether it is within the rule */
  consume(key: string): Promise<LimitDecision>;
}

export interface LimiterStore {
  readonly kind: 'memory' | 'redis' | 'database';
  limiter(rule: LimitRule): Limiter;
  close(): Promise<void>;
}

/** Builds a decision from a hit count, the same way for every store. */
export function decide(rule: LimitRule, hits: number, msLeft: number): LimitDecision {
  const allowed = hits <= rule.points;
  return { allowed, remaining: Math.max(rule.points - hits, 0), retryAfterSec: Math.max(Math.ceil(msLeft / 1000), allowed ? 0 : 1) };
}
