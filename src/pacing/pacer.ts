import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { domainToASCII } from 'node:url';
import type { Clock } from '../core/clock.ts';
import { type Pacer, type PaceRule, WINDOW_MS } from '../core/pacer.ts';
import type { PacingStore } from './contract.ts';

export interface PaceLimits {
  /** messages per second over every worker sharing the store; 0 = no limit */
  sendRate: number;
  /** messages per second per recipient domain (keys normalised: lower case, ASCII) */
  domainRates: Readonly<Record<string, number>>;
}

/** How long a waiter sleeps at most before asking again (a worker that stopped frees its turn late). */
const MAX_SLEEP_MS = 1000;

export interface PacerOptions {
  clock: Clock;
  /** tests pass one that moves their manual clock */
  sleep?: (ms: number) => Promise<unknown>;
}

/** The recipient domain a rate applies to: lower case, ASCII (punycode), no trailing dot. */
export function normalizeDomain(domain: string): string {
  const lower = domain.trim().toLowerCase().replace(/\.$/, '');
  return domainToASCII(lower) || lower;
}

/** undefined when neither rate is set: the delivery loop then does no pacing work at all. */
export function createPacer(limits: PaceLimits, store: PacingStore, opts: PacerOptions): Pacer | undefined {
  const domainRules = new Map(Object.entries(limits.domainRates).map(([d, rate]) => [normalizeDomain(d), rule(`d:${normalizeDomain(d)}`, rate)]));
  if (limits.sendRate <= 0 && domainRules.size === 0) return undefined;
  const global: PaceRule | undefined = limits.sendRate > 0 ? { ...rule('*', limits.sendRate), bookable: true } : undefined;
  const pause = opts.sleep ?? sleep;
  // One waiter per set of keys in this process asks the store; the others queue behind it, so a
  // fleet of workers asks the store a few times per turn rather than once per waiting message.
  const queues = new Map<string, Promise<void>>();

  const rulesFor = (recipients: readonly string[]): PaceRule[] => {
    const rules = global ? [global] : [];
    for (const address of recipients) {
      const r = domainRules.get(normalizeDomain(address.slice(address.lastIndexOf('@') + 1)));
      if (r && !rules.includes(r)) rules.push(r);
    }
    return rules;
  };
  const takeTurn = async (rules: PaceRule[]): Promise<() => void> => {
    const id = randomBytes(12).toString('base64url');
    for (;;) {
      const turn = await store.take(rules, opts.clock.now(), id);
      if (turn.taken) {
        if (turn.waitMs > 0) await pause(turn.waitMs);
        // a lost report keeps the turn counted until its in-flight time ends: slower, never faster
        return () => void store.done(rules, id, opts.clock.now()).catch(() => {});
      }
      await pause(Math.min(turn.waitMs, MAX_SLEEP_MS));
    }
  };

  return {
    acquire(recipients) {
      const rules = rulesFor(recipients);
      if (rules.length === 0) return Promise.resolve(noop);
      const group = rules.map((r) => r.key).join(' ');
      const turn = (queues.get(group) ?? Promise.resolve()).then(() => takeTurn(rules));
      const tail = turn.then(noop, noop);
      queues.set(group, tail);
      tail.then(() => {
        if (queues.get(group) === tail) queues.delete(group);
      });
      return turn;
    },
    close: () => store.close(),
  };
}

const noop = () => {};

function rule(key: string, perSecond: number): PaceRule {
  return { key, intervalMs: 1000 / perSecond, perWindow: Math.max(1, Math.floor((perSecond * WINDOW_MS) / 1000)) };
}
