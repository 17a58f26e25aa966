import type { Notify } from '../../src/notify.ts';

/**
 * Where a campaign run's wall time goes, seen from outside the send loop (nothing in src/ knows):
 * each pool slot is either in the mailer (on the wire), rendering, waiting for its start to be
 * committed, or idle (a group's window, a chunk boundary: the claim, the audience read). Wraps the
 * instance's mailer, dispatcher, group write and transactions; `take()` returns what was seen since
 * the last call.
 */
export interface WallTime {
  /** sums in ms over every call since the last take() */
  mailerMs: number;
  deliverMs: number;
  /** group writes: how many, how many starts and outcomes they carried, their time, and start-weighted time (what slots waited) */
  groups: number;
  starts: number;
  outcomes: number;
  groupMs: number;
  startWaitMs: number;
  /** store.transaction calls (the chunk claims, the stale reclaim) and their time */
  transactions: number;
  transactionMs: number;
}

const zero = (): WallTime => ({ mailerMs: 0, deliverMs: 0, groups: 0, starts: 0, outcomes: 0, groupMs: 0, startWaitMs: 0, transactions: 0, transactionMs: 0 });

/** `fn` with the time each call took (until it settles) handed to `spent` */
function timed<A extends unknown[], R>(fn: (...args: A) => Promise<R>, spent: (ms: number, ...args: A) => void): (...args: A) => Promise<R> {
  return async (...args) => {
    const s = performance.now();
    try {
      return await fn(...args);
    } finally {
      spent(performance.now() - s, ...args);
    }
  };
}

export function watchWallTime(notify: Notify): { take(): WallTime } {
  let t = zero();
  const { mailer, dispatcher, store } = notify.context;
  mailer.send = timed(mailer.send.bind(mailer), (ms) => (t.mailerMs += ms));
  dispatcher.deliver = timed(dispatcher.deliver.bind(dispatcher), (ms) => (t.deliverMs += ms));
  store.campaigns.writeSendGroup = timed(store.campaigns.writeSendGroup.bind(store.campaigns), (ms, _id, group) => {
    t.groups++;
    t.starts += group.start.length;
    t.outcomes += group.outcomes.length;
    t.groupMs += ms;
    t.startWaitMs += ms * group.start.length;
  });
  store.transaction = timed(store.transaction.bind(store), (ms) => {
    t.transactions++;
    t.transactionMs += ms;
  }) as typeof store.transaction;
  return {
    take() {
      const out = t;
      t = zero();
      return out;
    },
  };
}

/** one line: the slots' time (slots x wall) split into mailer, render, start waits and the rest */
export function describeWallTime(w: WallTime, wallMs: number, slots: number, sent: number): string {
  const slotMs = slots * wallMs;
  const pct = (ms: number) => `${((100 * ms) / slotMs).toFixed(0)}%`;
  const idle = slotMs - w.deliverMs - w.startWaitMs;
  return [
    `slot time ${(slotMs / 1000).toFixed(2)} s (${slots} x wall): mailer ${pct(w.mailerMs)}, render ${pct(w.deliverMs - w.mailerMs)}, waiting for starts ${pct(w.startWaitMs)}, other (group windows, chunk boundaries) ${pct(idle)}`,
    `groups ${w.groups} (${(sent / Math.max(1, w.groups)).toFixed(2)} msg each; ${(w.starts / Math.max(1, w.groups)).toFixed(2)} starts, ${(w.outcomes / Math.max(1, w.groups)).toFixed(2)} outcomes), ${(w.groupMs / Math.max(1, w.groups)).toFixed(2)} ms per group write; ` +
      `${w.transactions} transactions (claims) ${(w.transactionMs / Math.max(1, w.transactions)).toFixed(1)} ms each, ${((100 * w.transactionMs) / wallMs).toFixed(0)}% of wall`,
  ].join('\n  ');
}
