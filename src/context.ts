import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Clock } from './core/clock.ts';
import type { NotifyEvents } from './core/events.ts';
import type { Store } from './core/storage/index.ts';

/** What every part of a running instance shares. Built once in notify.ts. */
export interface Context {
  readonly config: Config;
  readonly store: Store;
  readonly events: NotifyEvents;
  readonly clock: Clock;
  readonly log: Logger;
  /** HMAC key for link references; from the `secret` option or generated once and kept in notify_meta */
  readonly secret: string;
  /** network access for webhook certificates and confirmations; injectable so tests run offline */
  readonly fetch: typeof fetch;
}
