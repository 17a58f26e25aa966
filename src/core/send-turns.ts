/**
 * Turns to hand a message to the mailer, shared by every delivery run of one instance (campaign
 * runs at once, a drip run beside them): at most `size` sends are started (marked `sending`, in
 * doubt after a crash) and in the mailer at a time, however many runs overlap. The mailer's own
 * bound (an SMTP pool's `maxConnections`) caps connections, not the starts written before a
 * connection is free; without shared turns two runs of one process each started that many.
 */
/**
 * Deliveries in flight at once for a mailer that does not say how many it carries (an SMTP mailer
 * says its pool's size, `maxConnections`).
 */
export const DEFAULT_CONCURRENCY = 5;

export interface SendTurns {
  /** waits for a turn; call the returned function once the send is done with the mailer */
  take(): Promise<() => void>;
}

export function createSendTurns(size: number): SendTurns {
  let free = Math.max(1, size);
  const waiting: (() => void)[] = [];
  const give = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  const turn = () => {
    let given = false;
    // once only: a slot that both skips and finishes a send gives its turn back one time
    return () => {
      if (given) return;
      given = true;
      give();
    };
  };
  return {
    take() {
      if (free > 0) {
        free--;
        return Promise.resolve(turn());
      }
      return new Promise((resolve) => waiting.push(() => resolve(turn())));
    },
  };
}
