import type { CampaignsService } from './core/campaigns.ts';
import type { ClickResolver } from './core/click-resolver.ts';
import type { ContactsService } from './core/contacts.ts';
import type { DripsService } from './core/drips.ts';
import type { ListsService } from './core/lists.ts';
import type { Optin } from './core/optin.ts';
import type { StatsService } from './core/stats.ts';

/**
 * The domain's services of one instance, built once in notify.ts: the public API, the HTTP
 * routes and the CLI call the same objects, so a service that keeps state (the click cache) or
 * needs another (drips and send use contacts) is never built twice with different wiring.
 */
export interface Services {
  readonly contacts: ContactsService;
  readonly lists: ListsService;
  readonly campaigns: CampaignsService;
  readonly drips: DripsService;
  /** figures read after the opens and clicks this process has buffered are written */
  readonly stats: StatsService;
  /** click destinations, shared by the Hono route and the node:http fast path (one cache) */
  readonly clicks: ClickResolver;
  /** double opt-in links and their confirmation mail */
  readonly optin: Optin;
}
