import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { NotifyError } from '../errors.ts';
import { Registry } from '../registry.ts';
import type { WebhookDriverDeps, WebhookDriverInterface } from './contract.ts';
import { MailgunWebhookDriver } from './drivers/mailgun.ts';
import { PostmarkWebhookDriver } from './drivers/postmark.ts';
import { SendGridWebhookDriver } from './drivers/sendgrid.ts';
import { SesSnsWebhookDriver } from './drivers/ses-sns.ts';

export interface ResolveDriverOptions extends WebhookDriverDeps {
  log: Logger;
  /** folder a relative module specifier is resolved from */
  cwd: string;
}

/** What a driver factory gets: the options it reads its keys from, and the injectable parts. */
export interface DriverDeps extends ResolveDriverOptions {
  config: Config;
}

/** What a custom driver class is constructed with: `new MyDriver({ config, fetch, now })`. */
export interface CustomDriverOptions extends WebhookDriverDeps {
  config: Config;
}

export interface ResolvedDriver {
  driver: WebhookDriverInterface;
  /** key of the driver's receipts (notify_webhook_receipts.provider) */
  name: string;
}

function sesDriver(_: string, { config, fetch, now, log }: DriverDeps): ResolvedDriver {
  if (config.snsTopicArns.length === 0) log.warn("webhookDriver 'ses' without snsTopicArns accepts (and confirms) any SNS topic: list your topic ARNs in snsTopicArns");
  const driver = new SesSnsWebhookDriver({ topicArns: config.snsTopicArns, fetch, now, onReject: (reason) => log.warn({ reason }, 'SNS webhook refused') });
  return { driver, name: 'ses' };
}

/** Events a provider sent that are deliberately not applied: an operator should be able to see them. */
function notApplied(log: Logger, driver: string): (reason: string) => void {
  return (reason) => log.info({ driver, reason }, 'webhook event not applied');
}

/** Spelled out: the option's validator reads this registry and Config is inferred from the validator. */
type DriverRegistry = Registry<DriverDeps, ResolvedDriver | Promise<ResolvedDriver>>;

/**
 * The webhook drivers the `webhookDriver` option can name: a built-in by its name or its class
 * name, or an application's driver as `<module>#<Export>`. Receipts are keyed by the built-in's
 * name whichever spelling chose it, so switching spellings never re-applies an old delivery.
 */
export const webhookDrivers: DriverRegistry = new Registry<DriverDeps, ResolvedDriver | Promise<ResolvedDriver>>('webhookDriver')
  .register('ses', { usage: 'ses', create: sesDriver })
  .register('postmark', {
    usage: 'postmark',
    create: (_, { config, log }) => ({
      driver: new PostmarkWebhookDriver({ username: config.postmarkWebhookUsername, password: config.postmarkWebhookPassword, onIgnored: notApplied(log, 'postmark') }),
      name: 'postmark',
    }),
  })
  .register('sendgrid', {
    usage: 'sendgrid',
    create: (_, { config, log }) => ({ driver: new SendGridWebhookDriver({ publicKey: config.sendgridWebhookPublicKey, onIgnored: notApplied(log, 'sendgrid') }), name: 'sendgrid' }),
  })
  .register('mailgun', { usage: 'mailgun', create: (_, { config }) => ({ driver: new MailgunWebhookDriver({ signingKey: config.mailgunWebhookSigningKey }), name: 'mailgun' }) })
  .alias(SesSnsWebhookDriver.name, 'ses')
  .alias(PostmarkWebhookDriver.name, 'postmark')
  .alias(SendGridWebhookDriver.name, 'sendgrid')
  .alias(MailgunWebhookDriver.name, 'mailgun')
  .registerPattern('custom', { usage: '<module>#<ExportName>', pattern: /^[^#\s]+#[A-Za-z_$][\w$]*$/, create: loadCustom });

async function loadCustom(spec: string, { config, fetch, now, cwd }: DriverDeps): Promise<ResolvedDriver> {
  const at = spec.lastIndexOf('#');
  const specifier = spec.slice(0, at);
  const exportName = spec.slice(at + 1);
  const fail = (why: string, cause?: unknown): never => {
    throw new NotifyError('CONFIG_INVALID', `Option 'webhookDriver' ('${spec}'): ${why}`, { option: 'webhookDriver' }, { cause });
  };
  let mod: Record<string, unknown>;
  try {
    mod = await import(moduleUrl(specifier, cwd));
  } catch (err) {
    return fail(`could not load the module: ${(err as Error).message}`, err);
  }
  const exported = mod[exportName];
  if (exported === undefined) return fail(`the module has no export '${exportName}'`);
  let driver: unknown = exported;
  if (typeof exported === 'function') {
    try {
      driver = new (exported as new (o: CustomDriverOptions) => unknown)({ config, fetch, now });
    } catch (err) {
      return fail(`constructing ${exportName} failed: ${(err as Error).message}`, err);
    }
  }
  return { driver: checkedDriver(driver, exportName), name: driverName(driver, exportName) };
}

function moduleUrl(specifier: string, cwd: string): string {
  if (specifier.startsWith('.') || isAbsolute(specifier)) return pathToFileURL(resolve(cwd, specifier)).href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(specifier)) return specifier;
  // A package of the application: resolved from the application's folder, not from notify's.
  try {
    return pathToFileURL(createRequire(join(cwd, 'noop.js')).resolve(specifier)).href;
  } catch {
    return specifier;
  }
}

const METHODS = ['verifySignature', 'isSubscriptionConfirmation', 'confirmSubscription', 'parseEvents'] as const;

/** `driver` when it has every method of the interface; else CONFIG_INVALID naming the missing ones. */
export function checkedDriver(driver: unknown, what: string): WebhookDriverInterface {
  const missing = METHODS.filter((m) => typeof (driver as Record<string, unknown> | null)?.[m] !== 'function');
  if (missing.length > 0) {
    throw new NotifyError('CONFIG_INVALID', `Option 'webhookDriver': ${what} is not a WebhookDriverInterface (missing ${missing.join(', ')})`, { option: 'webhookDriver' });
  }
  return driver as WebhookDriverInterface;
}

/** The receipts key of an application's driver: its own `name`, else its class name. */
export function driverName(driver: unknown, fallback: string): string {
  const own = (driver as { name?: unknown }).name;
  if (typeof own === 'string' && own) return own;
  const ctor = (driver as { constructor?: { name?: string } }).constructor?.name;
  return ctor && ctor !== 'Object' ? ctor : fallback;
}
