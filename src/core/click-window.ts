import { BURST_WINDOW_MS } from './engagement.ts';

/**
 * The clicks one process has written in the last seconds, by send: what link-burst detection
 * needs to know about a send's recent clicks, kept in memory so that a flush does not ask the
 * database. It only knows what it was told, so `covers(since)` says whether it holds every click
 * this process wrote at or after `since`; whether other writers exist is the caller's question.
 *
 * Bounded: clicks older than the newest one seen minus BURST_WINDOW_MS and `slackMs` are dropped
 * (and the window no longer covers those times); past `maxSends` sends it forgets everything and
 * covers only what comes after.
 */
export interface ClickWindow {
  /** whether every click added with a time >= `since` is still held */
  covers(since: number): boolean;
  /** adds to `out` the links of `sendId` clicked at or after `since` */
  linksSince(sendId: number, since: number, out: Set<number>): void;
  add(sendId: number, link: number, at: number): void;
  readonly sends: number;
}

export interface ClickWindowOptions {
  /** the window covers nothing before this time (epoch ms): what happened before it was made */
  from: number;
  /** how much older than the burst window a click may be and still be held (late or out-of-order events) */
  slackMs?: number;
  maxSends?: number;
}

export function createClickWindow(opts: ClickWindowOptions): ClickWindow {
  const { slackMs = 10_000, maxSends = 100_000 } = opts;
  // per send, each link clicked with the time of its latest click: a link clicked thousands of
  // times (one shared publicly) is one entry
  const bySend = new Map<number, Map<number, number>>();
  // one entry per click added, in the order added: pruning walks it from the front
  let order: number[] = [];
  let orderAt: number[] = [];
  let head = 0;
  let newest = Number.NEGATIVE_INFINITY;
  let from = opts.from;

  function prune(): void {
    const cutoff = newest - BURST_WINDOW_MS - slackMs;
    if (cutoff <= from) return;
    while (head < order.length && orderAt[head] < cutoff) {
      const id = order[head++];
      const links = bySend.get(id);
      if (!links) continue;
      for (const [link, at] of links) if (at < cutoff) links.delete(link);
      if (links.size === 0) bySend.delete(id);
    }
    from = cutoff;
    if (head > 4096 && head * 2 > order.length) {
      order = order.slice(head);
      orderAt = orderAt.slice(head);
      head = 0;
    }
  }

  return {
    covers: (since) => since >= from,
    linksSince(sendId, since, out) {
      const links = bySend.get(sendId);
      if (links) for (const [link, at] of links) if (at >= since) out.add(link);
    },
    add(sendId, link, at) {
      if (at < from) return; // older than what the window covers: it could not answer for that time anyway
      let links = bySend.get(sendId);
      if (!links) {
        if (bySend.size >= maxSends) {
          // too many sends to hold: start over, covering only what comes after
          bySend.clear();
          order = [];
          orderAt = [];
          head = 0;
          from = Math.max(newest, at) + 1;
          return;
        }
        links = new Map();
        bySend.set(sendId, links);
      }
      const held = links.get(link);
      if (held === undefined || at > held) links.set(link, at);
      order.push(sendId);
      orderAt.push(at);
      if (at > newest) {
        newest = at;
        prune();
      }
    },
    get sends() {
      return bySend.size;
    },
  };
}
