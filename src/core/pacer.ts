/**
 * Sending-rate control as the delivery loop sees it: before each message it waits for a turn, and
 * says when the message has left. The implementation (src/pacing/) spaces turns evenly over every
 * worker sharing `rateLimitStore`, per instance (`sendRate`) and per recipient domain (`domainRates`).
 */
export interface Pacer {
  /** resolves when a message to these addresses may leave, with what to call once it has (sent or not) */
  acquire(recipients: readonly string[]): Promise<() => void>;
  close(): Promise<void>;
}

/** One rule: turns of `key` at least `intervalMs` apart, and at most `perWindow` in any window. */
export interface PaceRule {
  key: string;
  intervalMs: number;
  /** messages of this key that may arrive in any one window of WINDOW_MS */
  perWindow: number;
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

/** What a store holds per key: the next turn, and the turns still counted in the window. */
export interface KeyState {
  /** earliest next turn (0 = free) */
  next: number;
  /** turns counted now: in flight, or left less than WINDOW_MS ago */
  live: number;
  /** when the first of them stops counting (Infinity when none) */
  firstFree: number;
}

export const WINDOW_MS = 1000;
/**
 * A turn whose message has not been reported done counts this long at most (a worker that died
 * mid-send): longer than an SMTP exchange takes, short enough for the fleet to go on.
 */
export const IN_FLIGHT_MS = 60_000;

/**
 * How far behind its schedule a turn may be taken and still keep the schedule: a waiter that wakes
 * late on a busy machine does not push every later turn back (which would lose throughput). At most
 * half the interval, so two turns are never closer than half of it; the window keeps the limit.
 */
export const CATCH_UP_MS = 25;

/**
 * The one decision every pacing store makes, atomically over all of `rules`.
 *
 * Spacing: a turn is taken when every key's next turn has come; when only the bookable key is
 * busy, its next turn is booked; else nothing changes and `waitMs` says when to ask again.
 *
 * The window: a turn counts from when it is given until WINDOW_MS after its message has left
 * (done), and no key gets a turn while `perWindow` of its turns count. Any window of WINDOW_MS at
 * the receiving server then holds at most `perWindow` messages of the key however late each one
 * arrives (a new SMTP connection, a busy machine): when the last of them was given its turn, all
 * the others had been given theirs and had not left a window earlier, so they were counted.
 *
 * `next` returns the keys' new next turns when taken; the store records the turn as in flight.
 */
export function takeTurn(rules: readonly PaceRule[], state: ReadonlyMap<string, KeyState>, now: number): Turn & { next?: Map<string, number> } {
  let at = now;
  let othersFree = true;
  let windowFree = now;
  for (const r of rules) {
    const s = state.get(r.key) ?? { next: 0, live: 0, firstFree: Number.POSITIVE_INFINITY };
    at = Math.max(at, s.next);
    if (!r.bookable && s.next > now) othersFree = false;
    if (s.live >= r.perWindow) windowFree = Math.max(windowFree, s.firstFree);
  }
  // a full window: ask again when its first turn stops counting (at the latest IN_FLIGHT_MS on)
  if (windowFree > now) return { taken: false, waitMs: Math.max(1, Math.min(windowFree, now + IN_FLIGHT_MS) - now) };
  const booking = at > now && othersFree && rules.some((r) => !r.bookable);
  if (at > now && !booking) return { taken: false, waitMs: at - now };
  const updated = new Map<string, number>();
  for (const r of rules) {
    const due = state.get(r.key)?.next ?? 0;
    // on schedule (or a little late): the next turn keeps the schedule; else a new one starts at this turn
    updated.set(r.key, (at - due <= Math.min(CATCH_UP_MS, r.intervalMs / 2) ? due : at) + r.intervalMs);
  }
  return { taken: true, waitMs: at - now, next: updated };
}
