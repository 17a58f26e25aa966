import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { LocalRuns } from './core/campaign-control.ts';
import type { Clock } from './core/clock.ts';
import type { Dispatcher } from './core/dispatch.ts';
import type { NotifyEvents } from './core/events.ts';
import type { Mailer } from './core/mailer.ts';
import type { Pacer } from './core/pacer.ts';
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
  /** the instance's one mailer (one SMTP pool), as the `mailer` option and testMode make it */
  readonly mailer: Mailer;
  /** compiles messages once per scope and delivers them through that mailer */
  readonly dispatcher: Dispatcher;
  /** this instance's campaign runs in this process, so a pause or an auto-pause stops them at once */
  readonly runs: LocalRuns;
  /** waits for a sending turn (`sendRate`, `domainRates`); absent when neither is set */
  readonly pacer?: Pacer;
}
