import type { Kysely } from 'kysely';
import { type ClickWindow, createClickWindow } from '../../core/click-window.ts';
import { BURST_WINDOW_MS } from '../../core/engagement.ts';
import { fixedStatement } from '../fixed-statement.ts';
import type { Database } from '../schema.ts';

/**
 * A store's memory of the clicks it wrote itself in the last seconds (core/click-window.ts), so
 * a flush can learn which links a send had clicked recently without a query (`knows`); the window
 * learns each batch once it has committed (`write`). One per store: it sees every batch that
 * store writes.
 *
 * The window holds only this process's clicks, so it answers only when no other writer can have
 * stored a click of the window: every tracking batch is stored with its id and time in the same
 * transaction as its events (notify_tracking_batches), so another process (`notify serve
 * --workers`, a second server, an earlier run) shows up as batch rows this store did not write,
 * and such a flush reads the database as before. So does a flush whose events reach back before
 * the window was made or past what it still holds, and one that starts while another write of
 * this store has not finished. Counted, not listed: one index range count per flush with clicks.
 */
export interface RecentClicks {
  /** the window when it holds every click stored at or after `since`; undefined: read the database */
  knows(trx: Kysely<Database>, since: number): Promise<ClickWindow | undefined>;
  /**
   * Runs one batch write. The write tells `batch` each click it stores and whether it stored a
   * batch row (with `batch.at` as its created_at); the window learns them once `fn` resolved,
   * that is once the transaction committed.
   */
  write<T>(fn: (batch: BatchNotes) => Promise<T>): Promise<T>;
}

export interface BatchNotes {
  /** epoch ms: the created_at of the batch row */
  readonly at: number;
  click(sendId: number, link: number | null, at: number): void;
  /** the batch row was written */
  row(): void;
}

// prepared on PostgreSQL: a flush with clicks runs it every time
const COUNT_BATCHES = fixedStatement('select count(*) as n from notify_tracking_batches where created_at >= ?');

/** how far apart two writers' clocks may be; also how long this store remembers its own batches */
const CLOCK_SKEW_MS = 30_000;
const OWN_BATCHES_MS = 5 * 60_000;

export function createRecentClicks(now: () => number = Date.now): RecentClicks {
  const window = createClickWindow({ from: now() });
  let writing = 0;
  // created_at of the batch rows this store wrote, in the order written (ascending: Date.now())
  let own: number[] = [];
  return {
    async knows(trx, since) {
      if (writing > 1 || !window.covers(since)) return undefined;
      const at = now();
      // A writer stores its clicks after they happen (created_at >= their time), so a foreign
      // click at or after `since` is in a batch row from `since` on; the skew covers a clock
      // running ahead of the batch times (a test clock, another machine).
      const horizon = Math.min(since, at - BURST_WINDOW_MS - CLOCK_SKEW_MS);
      if (horizon < at - OWN_BATCHES_MS) return undefined;
      const mine = own.length - firstAtOrAfter(own, horizon);
      const { rows } = await COUNT_BATCHES<{ n: number | string }>(trx, [horizon]);
      return Number(rows[0].n) === mine ? window : undefined;
    },
    async write(fn) {
      writing++;
      const clicks: number[] = [];
      let row = false;
      const batch: BatchNotes = {
        at: now(),
        click: (sendId, link, at) => {
          if (link !== null) clicks.push(sendId, link, at);
        },
        row: () => {
          row = true;
        },
      };
      try {
        const result = await fn(batch);
        for (let i = 0; i < clicks.length; i += 3) window.add(clicks[i], clicks[i + 1], clicks[i + 2]);
        if (row) {
          // a clock stepped back: forget the order (the rows still counted make the next flushes read the database)
          if (own.length > 0 && batch.at < own[own.length - 1]) own = [];
          own.push(batch.at);
          const old = firstAtOrAfter(own, batch.at - OWN_BATCHES_MS);
          if (old > 1024) own = own.slice(old);
        }
        return result;
      } finally {
        writing--;
      }
    },
  };
}

/** index of the first time >= t in an ascending list (its length when none) */
function firstAtOrAfter(times: number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
