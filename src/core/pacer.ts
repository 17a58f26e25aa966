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
  /**
   * The instance-wide rule: a message whose other (domain) keys are free now books its next turn
   * ahead rather than racing for it. Without that, a domain that has waited for its own turn loses
   * most races for the shared one to the messages of domains that never wait, and falls far below
   * its rate. Booking the shared key's very next turn leaves no gap in it.
   */
  bookable?: boolean;
}

/** What a store answers: the turn is taken (now, or booked `waitMs` ahead), or ask again in `waitMs`. */
export interface Turn {
  taken: boolean;
  waitMs: number;
}

/**
 * How far behind its schedule a turn may be taken and still keep the schedule: a waiter that wakes
 * a few milliseconds late does not push every later turn back (which would lose throughput on a
 * busy machine). At most a quarter of the interval, so two turns are never closer than 3/4 of it.
 */
export const CATCH_UP_MS = 15;

/**
 * The one decision every pacing store makes, atomically over all of `rules`: `next` holds each
 * key's earliest next turn (absent = free). When every key is free at `now` the turn is taken; when
 * only the bookable key is busy, its next turn is booked; otherwise nothing changes and `waitMs`
 * says when to ask again. Nothing else is reserved ahead, so a domain waiting for its turn never
 * holds back messages to other domains. `next` returns the keys' new next turns when taken.
 */
export function takeTurn(rules: readonly PaceRule[], next: ReadonlyMap<string, number>, now: number): Turn & { next?: Map<string, number> } {
  let at = now;
  let othersFree = true;
  for (const r of rules) {
    const due = next.get(r.key) ?? 0;
    at = Math.max(at, due);
    if (!r.bookable && due > now) othersFree = false;
  }
  const booking = at > now && othersFree && rules.some((r) => !r.bookable);
  if (at > now && !booking) return { taken: false, waitMs: at - now };
  const updated = new Map<string, number>();
  for (const r of rules) {
    const due = next.get(r.key) ?? 0;
    // on schedule (or a little late): the next turn keeps the schedule; else a new one starts at this turn
    updated.set(r.key, (at - due <= Math.min(CATCH_UP_MS, r.intervalMs / 4) ? due : at) + r.intervalMs);
  }
  return { taken: true, waitMs: at - now, next: updated };
}
