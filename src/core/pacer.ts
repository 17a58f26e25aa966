/**
 * Sending-rate control as the delivery loop sees it: before each message it waits for a turn. The
 * implementation (src/pacing/) spaces turns evenly over every worker sharing `rateLimitStore`, per
 * instance (`sendRate`) and per recipient domain (`domainRates`).
 */
export interface Pacer {
  /** resolves when a message to these addresses may leave */
  acquire(recipients: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** One spacing rule: turns of `key` are at least `intervalMs` apart. */
export interface PaceRule {
  key: string;
  intervalMs: number;
}

/**
 * How far behind its schedule a turn may be taken and still keep the schedule: a waiter that wakes
 * a few milliseconds late does not push every later turn back (which would lose throughput on a
 * busy machine). At most a quarter of the interval, so two turns are never closer than 3/4 of it.
 */
export const CATCH_UP_MS = 15;

/**
 * The one decision every pacing store makes, atomically over all of `rules`: `next` holds each
 * key's earliest next turn (absent = free). When every key is free at `now` the turn is taken and
 * the keys' next turns returned; otherwise nothing changes and `waitMs` says how long until the
 * latest of them is free. Nothing is reserved ahead, so a domain waiting for its turn never holds
 * back messages to other domains.
 */
export function takeTurn(rules: readonly PaceRule[], next: ReadonlyMap<string, number>, now: number): { waitMs: number; next?: Map<string, number> } {
  let waitMs = 0;
  for (const r of rules) waitMs = Math.max(waitMs, (next.get(r.key) ?? 0) - now);
  if (waitMs > 0) return { waitMs };
  const updated = new Map<string, number>();
  for (const r of rules) {
    const due = next.get(r.key) ?? 0;
    // on schedule (or a little late): the next turn keeps the schedule; else a new one starts now
    updated.set(r.key, (now - due <= Math.min(CATCH_UP_MS, r.intervalMs / 4) ? due : now) + r.intervalMs);
  }
  return { waitMs: 0, next: updated };
}
