import type { Config } from '../config.ts';
import { checkedDriver, driverName, type ResolveDriverOptions, type ResolvedDriver, webhookDrivers } from './registry.ts';

export type { ParsedWebhookEvent, WebhookDriverInterface, WebhookEventType, WebhookRequest, WebhookDriverDeps } from './contract.ts';
export { type CustomDriverOptions, type DriverDeps, type ResolveDriverOptions, type ResolvedDriver, webhookDrivers } from './registry.ts';

/**
 * The driver the webhookDriver option names, built once at start: a driver object as it is, or an
 * entry of the registry (a built-in, or a `<module>#<Export>` of the application). Anything that
 * does not yield a complete driver fails createNotify with CONFIG_INVALID naming the option.
 * Empty: no driver.
 */
export async function resolveWebhookDriver(config: Config, opts: ResolveDriverOptions): Promise<ResolvedDriver | undefined> {
  const spec = config.webhookDriver;
  if (spec === '') return undefined;
  if (typeof spec === 'object') return { driver: checkedDriver(spec, 'the driver object'), name: driverName(spec, 'custom') };
  return webhookDrivers.create(spec, { ...opts, config });
}
