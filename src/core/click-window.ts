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
  return new SendClickWindow(opts);
}

class SendClickWindow implements ClickWindow {
  private readonly slackMs: number;
  private readonly maxSends: number;
  // per send, each link clicked with the time of its latest click: a link clicked thousands of
  // times (one shared publicly) is one entry
  private readonly bySend = new Map<number, Map<number, number>>();
  // one entry per click added, in the order added: pruning walks it from the front
  private order: number[] = [];
  private orderAt: number[] = [];
  private head = 0;
  private newest = Number.NEGATIVE_INFINITY;
  private from: number;

  constructor(opts: ClickWindowOptions) {
    this.slackMs = opts.slackMs ?? 10_000;
    this.maxSends = opts.maxSends ?? 100_000;
    this.from = opts.from;
  }

  covers(since: number): boolean {
    return since >= this.from;
  }

  linksSince(sendId: number, since: number, out: Set<number>): void {
    const links = this.bySend.get(sendId);
    if (links) for (const [link, at] of links) if (at >= since) out.add(link);
  }

  add(sendId: number, link: number, at: number): void {
    if (at < this.from) return; // older than what the window covers: it could not answer for that time anyway
    let links = this.bySend.get(sendId);
    if (!links) {
      if (this.bySend.size >= this.maxSends) {
        // too many sends to hold: start over, covering only what comes after
        this.bySend.clear();
        this.order = [];
        this.orderAt = [];
        this.head = 0;
        this.from = Math.max(this.newest, at) + 1;
        return;
      }
      links = new Map();
      this.bySend.set(sendId, links);
    }
    const held = links.get(link);
    if (held === undefined || at > held) links.set(link, at);
    this.order.push(sendId);
    this.orderAt.push(at);
    if (at > this.newest) {
      this.newest = at;
      this.prune();
    }
  }

  get sends(): number {
    return this.bySend.size;
  }

  private prune(): void {
    const cutoff = this.newest - BURST_WINDOW_MS - this.slackMs;
    if (cutoff <= this.from) return;
    while (this.head < this.order.length && this.orderAt[this.head] < cutoff) {
      const id = this.order[this.head++];
      const links = this.bySend.get(id);
      if (!links) continue;
      for (const [link, at] of links) if (at < cutoff) links.delete(link);
      if (links.size === 0) this.bySend.delete(id);
    }
    this.from = cutoff;
    if (this.head > 4096 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.orderAt = this.orderAt.slice(this.head);
      this.head = 0;
    }
  }
}
