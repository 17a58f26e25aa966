import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { type Config, WEBHOOK_DRIVER_CLASSES } from '../config.ts';
import { NotifyError } from '../errors.ts';
import type { WebhookDriverDeps, WebhookDriverInterface } from './contract.ts';
import { MailgunWebhookDriver } from './drivers/mailgun.ts';
import { PostmarkWebhookDriver } from './drivers/postmark.ts';
import { SendGridWebhookDriver } from './drivers/sendgrid.ts';
import { SesSnsWebhookDriver } from './drivers/ses-sns.ts';

export type { ParsedWebhookEvent, WebhookDriverInterface, WebhookEventType, WebhookRequest, WebhookDriverDeps } from './contract.ts';

export interface ResolveDriverOptions extends WebhookDriverDeps {
  log: Logger;
  /** folder a relative module specifier is resolved from */
  cwd: string;
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

const METHODS = ['verifySignature', 'isSubscriptionConfirmation', 'confirmSubscription', 'parseEvents'] as const;

/**
 * The driver the webhookDriver option names, built once at start: a built-in name, a
 * `<module>#<Export>` of the application, or a driver object. Anything that does not yield a
 * complete driver fails createNotify with CONFIG_INVALID naming the option. Empty: no driver.
 */
export async function resolveWebhookDriver(config: Config, opts: ResolveDriverOptions): Promise<ResolvedDriver | undefined> {
  const spec = config.webhookDriver;
  if (spec === '') return undefined;
  if (typeof spec === 'object') return { driver: checked(spec, 'the driver object'), name: nameOf(spec, 'custom') };
  switch (Object.hasOwn(WEBHOOK_DRIVER_CLASSES, spec) ? WEBHOOK_DRIVER_CLASSES[spec] : spec) {
    case 'ses':
      if (config.snsTopicArns.length === 0) opts.log.warn("webhookDriver 'ses' without snsTopicArns accepts (and confirms) any SNS topic: list your topic ARNs in snsTopicArns");
      return {
        driver: new SesSnsWebhookDriver({ topicArns: config.snsTopicArns, fetch: opts.fetch, now: opts.now, onReject: (reason) => opts.log.warn({ reason }, 'SNS webhook refused') }),
        name: 'ses',
      };
    case 'postmark':
      return { driver: new PostmarkWebhookDriver({ username: config.postmarkWebhookUsername, password: config.postmarkWebhookPassword, onIgnored: notApplied(opts.log, 'postmark') }), name: 'postmark' };
    case 'sendgrid':
      return { driver: new SendGridWebhookDriver({ publicKey: config.sendgridWebhookPublicKey, onIgnored: notApplied(opts.log, 'sendgrid') }), name: 'sendgrid' };
    case 'mailgun':
      return { driver: new MailgunWebhookDriver({ signingKey: config.mailgunWebhookSigningKey }), name: 'mailgun' };
  }
  return loadCustom(spec, config, opts);
}

/** Events a provider sent that are deliberately not applied: an operator should be able to see them. */
function notApplied(log: Logger, driver: string): (reason: string) => void {
  return (reason) => log.info({ driver, reason }, 'webhook event not applied');
}

async function loadCustom(spec: string, config: Config, opts: ResolveDriverOptions): Promise<ResolvedDriver> {
  const at = spec.lastIndexOf('#');
  const specifier = spec.slice(0, at);
  const exportName = spec.slice(at + 1);
  const fail = (why: string, cause?: unknown): never => {
    throw new NotifyError('CONFIG_INVALID', `Option 'webhookDriver' ('${spec}'): ${why}`, { option: 'webhookDriver' }, { cause });
  };
  let mod: Record<string, unknown>;
  try {
    mod = await import(moduleUrl(specifier, opts.cwd));
  } catch (err) {
    return fail(`could not load the module: ${(err as Error).message}`, err);
  }
  const exported = mod[exportName];
  if (exported === undefined) return fail(`the module has no export '${exportName}'`);
  let driver: unknown = exported;
  if (typeof exported === 'function') {
    try {
      driver = new (exported as new (o: CustomDriverOptions) => unknown)({ config, fetch: opts.fetch, now: opts.now });
    } catch (err) {
      return fail(`constructing ${exportName} failed: ${(err as Error).message}`, err);
    }
  }
  return { driver: checked(driver, exportName), name: nameOf(driver, exportName) };
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

function checked(driver: unknown, what: string): WebhookDriverInterface {
  const missing = METHODS.filter((m) => typeof (driver as Record<string, unknown> | null)?.[m] !== 'function');
  if (missing.length > 0) {
    throw new NotifyError('CONFIG_INVALID', `Option 'webhookDriver': ${what} is not a WebhookDriverInterface (missing ${missing.join(', ')})`, { option: 'webhookDriver' });
  }
  return driver as WebhookDriverInterface;
}

function nameOf(driver: unknown, fallback: string): string {
  const own = (driver as { name?: unknown }).name;
  if (typeof own === 'string' && own) return own;
  const ctor = (driver as { constructor?: { name?: string } }).constructor?.name;
  return ctor && ctor !== 'Object' ? ctor : fallback;
}
