import { z } from 'zod';
import { parseMailboxUrl } from './bounces/mailbox-url.ts';
import { envName, type Layer, readConfigFile, readEnvFile, readEnvironment } from './config-sources.ts';
import { backoff, bool, databaseUrl, dkimSpec, domainName, fitsFromLine, int, list, mailerSpec, rateLimitStore, url, webhookDriverSpec, webhooksOutSpec } from './config-values.ts';
import { BOUNCE_DOMAIN_MAX, LIST_ID_DOMAIN_MAX } from './core/header-limits.ts';
import { feedbackIdProblem } from './core/list-headers.ts';
import { NotifyError } from './errors.ts';
import { domainRatesOption, sendRateOption } from './pacing/options.ts';

/** Every option, its type and its default: the interface spec's options first, then notify's own. */
export const configSchema = z
  .object({
    fromName: z.string().default(''),
    fromEmail: z.string().superRefine(fitsFromLine).default(''),
    defaultLayout: z.string().default('notify/layouts/default'),
    trackingHost: url('trackingHost').default(''),
    batchSize: int(1).default(200),
    retryDelayMinutes: int(0).default(5),
    maxRetries: int(1).default(3),
    /** minutes a deferred campaign send waits before its 2nd, 3rd, ... attempt; the last one repeats */
    retryBackoffMinutes: backoff.default([1, 5, 15, 60, 240]),
    staleLockMinutes: int(1).default(30),
    throttleMs: int(0).default(0),
    /** messages per second over every worker sharing rateLimitStore; 0 = no limit */
    sendRate: sendRateOption,
    /** messages per second per recipient domain, e.g. { "gmail.com": 5 } */
    domainRates: domainRatesOption.default({}),
    markdownPath: z.string().default(''),
    testMode: bool.default(false),
    captureRateLimit: int(0).default(10),
    /** lists a capture form may join besides those created `public: true` (any case) */
    captureLists: list.default([]),
    /** when set, the only attribute names a capture post stores (others are dropped silently) */
    captureAttributes: list.optional(),
    honeypot: bool.default(true),
    /** a campaign whose bounces + complaints exceed this share of at least 200 sends is paused; 0 = never */
    autoPauseBounceRate: z.coerce
      .number({ invalid_type_error: 'must be a number' })
      .min(0, 'must be a share from 0 to 1 (0.05 = 5%)')
      .max(1, 'must be a share from 0 to 1 (0.05 = 5%)')
      .default(0),
    trackIpAddress: bool.default(false),
    webhookDriver: webhookDriverSpec.default(''),
    baseUrl: url('baseUrl').default('http://localhost:3000'),
    database: databaseUrl.default('sqlite:./notify.db'),
    mailer: mailerSpec.default('outbox:./outbox'),
    viewsPath: z.string().default('./views'),
    rateLimitStore: rateLimitStore.default('memory'),
    trustProxy: bool.default(false),
    snsTopicArns: list.default([]),
    postmarkWebhookUsername: z.string().default(''),
    postmarkWebhookPassword: z.string().default(''),
    sendgridWebhookPublicKey: z.string().default(''),
    mailgunWebhookSigningKey: z.string().default(''),
    unsubscribeConfirm: bool.default(false),
    /** 'all': the unsubscribe link makes the contact `unsubscribed`; 'list': a list campaign's link leaves that list only */
    unsubscribeScope: z.enum(['all', 'list'], { errorMap: () => ({ message: "must be 'all' or 'list'" }) }).default('all'),
    adminToken: z.string().default(''),
    doubleOptIn: bool.default(false),
    secret: z.string().default(''),
    /** imaps://user:pass@host:993/INBOX: the worker reads bounces and feedback reports from it */
    bounceMailbox: z.string().default(''),
    /** the domain of the VERP return path bounces+<send token>@<bounceDomain>; required with bounceMailbox */
    bounceDomain: domainName
      .refine((v) => v.length <= BOUNCE_DOMAIN_MAX, `must be at most ${BOUNCE_DOMAIN_MAX} characters, so Return-Path: <bounces+<22-character send token>@bounceDomain>, which the receiving server writes on one line, fits 78 characters`)
      .default(''),
    /** List-Id: <list.listIdDomain> on list campaigns */
    listIdDomain: domainName
      .refine((v) => v.length <= LIST_ID_DOMAIN_MAX, `must be at most ${LIST_ID_DOMAIN_MAX} characters, so List-Id <list.listIdDomain> fits a 78-character header line`)
      .default(''),
    /** Feedback-ID template: {campaign}, {list}, {kind} (campaign, drip, send, test) */
    feedbackId: z
      .string()
      .regex(/^[\x21-\x7e]*$/, 'must be printable ASCII without spaces (e.g. {id}:{kind}:notify)')
      .superRefine((v, ctx) => {
        const problem = feedbackIdProblem(v);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default(''),
    /** the name given in EHLO; default the machine's host name */
    smtpName: domainName.default(''),
    dkim: dkimSpec,
    trackOpens: bool.default(true),
    trackClicks: bool.default(true),
    /** outgoing webhooks: each event (all, or those in `events`) is POSTed, signed with `secret`, by the worker */
    webhooksOut: webhooksOutSpec.default([]),
    /** days a delivered or dead outgoing webhook row is kept after it was settled; 0 = forever */
    webhooksOutRetentionDays: int(0).default(7),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** `auto`: JSON lines for the library, serve and worker; `warning: ...` lines on stderr for the other CLI commands (JSON with --json) */
    logFormat: z.enum(['auto', 'json', 'text']).default('auto'),
  })
  .strict();

export type Config = Readonly<z.infer<typeof configSchema>>;
export type ConfigInput = z.input<typeof configSchema>;
export type OptionName = keyof Config;
export const OPTION_NAMES = Object.keys(configSchema.shape) as OptionName[];

export { envName };

export interface LoadConfigOptions {
  /** Path of a config file; false skips files; default: notify.config.json or .js in cwd if present. */
  configFile?: string | false;
  /** Path of a .env file; false skips it; default: .env in cwd if present. */
  envFile?: string | false;
  /** the real environment's layer; default process.env */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/**
 * Sources, later wins: defaults, config file, .env file, the environment, createNotify() options.
 * Every source is checked for unknown names before any is merged, and a wrong value names the
 * source it came from.
 */
export async function loadConfig(overrides: Partial<ConfigInput> = {}, opts: LoadConfigOptions = {}): Promise<Config> {
  const cwd = opts.cwd ?? process.cwd();
  const given = overrides as Record<string, unknown>;
  const layers: (Layer | undefined)[] = [
    await readConfigFile(opts.configFile, cwd),
    readEnvFile(opts.envFile, cwd, OPTION_NAMES),
    readEnvironment(opts.env ?? process.env, OPTION_NAMES),
    { values: given, sources: Object.fromEntries(Object.keys(given).map((k) => [k, 'createNotify() options'])) },
  ];
  const merged: Record<string, unknown> = {};
  const sourceOf: Record<string, string> = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const [key, value] of Object.entries(layer.values)) {
      if (value === undefined) continue;
      if (!OPTION_NAMES.includes(key as OptionName)) {
        const source = layer.sources[key];
        throw new NotifyError('CONFIG_INVALID', `Unknown option '${key}' (from ${source})`, { option: key, source });
      }
      merged[key] = value;
      sourceOf[key] = layer.sources[key];
    }
  }

  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const option = String(issue.path[0] ?? '');
    const source = sourceOf[option] ?? 'defaults';
    const shown = typeof merged[option] === 'object' ? '' : ` (got ${JSON.stringify(merged[option])})`;
    const field = issue.path.join('.') || option;
    throw new NotifyError('CONFIG_INVALID', `Option '${field}' from ${source} ${issue.message}${shown}`, { option, source });
  }
  checkBounceOptions(parsed.data, sourceOf);
  return Object.freeze({ ...parsed.data, snsTopicArns: Object.freeze([...parsed.data.snsTopicArns]) as string[] });
}

/** A bounce mailbox needs the domain its return paths use, and a URL it can log in with. */
function checkBounceOptions(c: { bounceMailbox: string; bounceDomain: string }, sourceOf: Record<string, string>): void {
  if (!c.bounceMailbox) return;
  if (!c.bounceDomain) {
    throw new NotifyError('CONFIG_INVALID', `Option 'bounceMailbox' from ${sourceOf.bounceMailbox} needs 'bounceDomain' too: set ${whereToSet('bounceDomain')}`, { option: 'bounceDomain' });
  }
  try {
    parseMailboxUrl(c.bounceMailbox);
  } catch (err) {
    throw new NotifyError('CONFIG_INVALID', `Option 'bounceMailbox' from ${sourceOf.bounceMailbox}: ${(err as Error).message}`, { option: 'bounceMailbox', source: sourceOf.bounceMailbox });
  }
}

/** How a user sets an option, for messages about a missing one: every source that can hold it. */
export function whereToSet(option: OptionName): string {
  return `"${option}" in notify.config.json, ${envName(option)} in .env or the environment, or createNotify({ ${option} })`;
}

/** The tracking host: trackingHost, or baseUrl when empty, so one host serves pages and tracking unless told otherwise. */
export function trackingHost(config: Config): string {
  return config.trackingHost || config.baseUrl;
}
