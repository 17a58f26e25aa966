import { z } from 'zod';
import { parseMailboxUrl } from './bounces/mailbox-url.ts';
import { closestName } from './closest-name.ts';
import { envName, type Layer, readConfigFile, readEnvFile, readEnvironment } from './config-sources.ts';
import { DKIM_TAG_MAX, fromAddressProblem, LIST_ID_DOMAIN_MAX } from './core/header-limits.ts';
import { feedbackIdProblem } from './core/list-headers.ts';
import { OUTBOUND_EVENT_TYPES } from './core/storage/outbound.ts';
import { NotifyError } from './errors.ts';
import { limiterStores } from './http/rate-limit/registry.ts';
import { asciiDomain } from './mail/address.ts';
import { mailTransports } from './mail/registry.ts';
import { domainRatesOption, sendRateOption } from './pacing/options.ts';
import { listOf } from './registry.ts';
import { webhookDrivers } from './webhooks/registry.ts';

const int = (min: number) => z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be a whole number').min(min, `must be at least ${min}`);
const bool = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const s = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off', ''].includes(s)) return false;
  return v;
}, z.boolean({ invalid_type_error: 'must be true or false' }));
const list = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v),
  z.array(z.string()),
);
/** minutes as a list: `[1, 5, 15]` or the text `"1,5,15"`; fractions allowed (tests, a local relay) */
const backoff = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',').map((s) => (s.trim() === '' ? Number.NaN : Number(s))) : v),
  z
    .array(z.number({ invalid_type_error: 'must be minutes separated by commas (e.g. 1,5,15)' }).finite('must be minutes separated by commas (e.g. 1,5,15)').positive('must be more than 0 minutes each'), {
      invalid_type_error: 'must be minutes separated by commas (e.g. 1,5,15)',
    })
    .min(1, 'must name at least one delay')
    .max(100, 'must name at most 100 delays (the last one repeats)'),
);
// Printable ASCII without white space or angle brackets: the URL goes whole into List-Unsubscribe `<...>`. At
// most 900 characters, so that header's line stays under RFC 5322's hard limit of 998.
const url = (what: string) =>
  z
    .string()
    .refine((v) => v === '' || /^https?:\/\/(?!\/)[\x21\x23-\x3b\x3d\x3f-\x7e]+$/i.test(v), `must be an http(s) URL for ${what}: ASCII (an international domain as punycode), without spaces or <>"`)
    .refine((v) => v.length <= 900, 'must be at most 900 characters')
    .transform((v) => v.replace(/\/+$/, ''));

const databaseUrl = z.string().refine((v) => /^sqlite:.+/.test(v) || /^postgres(ql)?:\/\/[^\s]+$/.test(v), {
  message: "must be 'sqlite:<path>' or 'postgres://user@host:port/db'",
});
const mailerSpec = z.union([
  z.string().refine((v) => mailTransports.accepts(v), () => ({ message: `must be ${listOf([...mailTransports.forms, 'a Mailer object'])}` })),
  z.custom<object>((v) => typeof v === 'object' && v !== null && typeof (v as { send?: unknown }).send === 'function', 'must be a Mailer object with send()'),
]);
const webhookDriverSpec = z.union([
  z.string().refine(
    (v) => v === '' || webhookDrivers.accepts(v),
    () => ({
      message: `must be empty, one of ${webhookDrivers.names.join(', ')} (or their class names ${webhookDrivers.aliases.join(', ')}), '<module>#<ExportName>' or a WebhookDriverInterface object`,
    }),
  ),
  z.custom<object>((v) => typeof v === 'object' && v !== null && typeof (v as { verifySignature?: unknown }).verifySignature === 'function', 'must be a WebhookDriverInterface'),
]);
/** `{ domainName, keySelector, privateKey }`, or the same as JSON text (from .env or the environment). */
const dkimSpec = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    if (v.trim() === '') return undefined;
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  },
  z
    .object(
      {
        domainName: z.string().regex(/^[A-Za-z0-9.-]+$/, 'must be a domain name').max(DKIM_TAG_MAX, `must be at most ${DKIM_TAG_MAX} characters (d= of DKIM-Signature on a 78-character line)`),
        keySelector: z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be a DNS label').max(DKIM_TAG_MAX, `must be at most ${DKIM_TAG_MAX} characters (s= of DKIM-Signature on a 78-character line)`),
        privateKey: z.string().min(1, 'must be a PEM private key'),
      },
      { invalid_type_error: 'must be an object { domainName, keySelector, privateKey } (JSON text from .env or the environment)' },
    )
    .strict()
    .optional(),
);
/** The in-process name `notify_enrollment_failed` is `notify:enrollment.failed` on the wire, so it gets a hint as a typo does. */
function unknownEvent(name: string): string {
  const meant = closestName(name, OUTBOUND_EVENT_TYPES);
  return `names an unknown event ${JSON.stringify(name)}${meant ? ` (did you mean ${meant}?)` : ''}: use ${OUTBOUND_EVENT_TYPES.join(', ')}`;
}

/** `[{ url, secret, events? }]`, or the same as JSON text (from .env or the environment). */
const webhooksOutSpec = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    if (v.trim() === '') return [];
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  },
  z.array(
    z
      .object(
        {
          url: z.string().refine((v) => /^https?:\/\/[^\s/]+/i.test(v) && URL.canParse(v), 'must be an http(s) URL'),
          secret: z.string().min(1, 'must not be empty (receivers check each request with it)'),
          events: z
            .array(z.string().refine((v) => (OUTBOUND_EVENT_TYPES as readonly string[]).includes(v), (v) => ({ message: unknownEvent(v) })))
            .optional(),
        },
        { invalid_type_error: 'must be an object { url, secret, events? }' },
      )
      .strict(),
    { invalid_type_error: 'must be a list [{ url, secret, events? }] (JSON text from .env or the environment)' },
  ).refine((hooks) => new Set(hooks.map((h) => h.url)).size === hooks.length, 'names one URL twice: give it one entry with all its events'),
);
const domainName = z.string().refine((v) => v === '' || /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(v), 'must be a domain name');

/** A from address must fit its header lines: the From line and the Message-ID made from its domain. */
function fitsFromLine(v: string, ctx: z.RefinementCtx): void {
  const address = v.trim();
  if (!address || !address.includes('@')) return;
  let problem: string | undefined;
  try {
    problem = fromAddressProblem(asciiDomain(address));
  } catch (err) {
    problem = (err as Error).message;
  }
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
}

const rateLimitStore = z.string().refine((v) => limiterStores.accepts(v), () => ({ message: `must be ${listOf(limiterStores.forms)}` }));

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
    bounceDomain: domainName.default(''),
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
