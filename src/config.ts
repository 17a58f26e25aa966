import { z } from 'zod';
import { envName, type Layer, readConfigFile, readEnvFile, readEnvironment } from './config-sources.ts';
import { NotifyError } from './errors.ts';
import { limiterStores } from './http/rate-limit/registry.ts';
import { mailTransports } from './mail/registry.ts';
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
const url = (what: string) =>
  z.string().refine((v) => v === '' || /^https?:\/\/[^\s/]+/i.test(v), `must be an http(s) URL for ${what}`).transform((v) => v.replace(/\/+$/, ''));

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
const rateLimitStore = z.string().refine((v) => limiterStores.accepts(v), () => ({ message: `must be ${listOf(limiterStores.forms)}` }));

/** Every option, its type and its default: the interface spec's options first, then notify's own. */
export const configSchema = z
  .object({
    fromName: z.string().default(''),
    fromEmail: z.string().default(''),
    defaultLayout: z.string().default('notify/layouts/default'),
    trackingHost: url('trackingHost').default(''),
    batchSize: int(1).default(200),
    retryDelayMinutes: int(0).default(5),
    maxRetries: int(1).default(3),
    staleLockMinutes: int(1).default(30),
    throttleMs: int(0).default(0),
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
    adminToken: z.string().default(''),
    doubleOptIn: bool.default(false),
    secret: z.string().default(''),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
    throw new NotifyError('CONFIG_INVALID', `Option '${option}' from ${source} ${issue.message}${shown}`, { option, source });
  }
  return Object.freeze({ ...parsed.data, snsTopicArns: Object.freeze([...parsed.data.snsTopicArns]) as string[] });
}

/** How a user sets an option, for messages about a missing one: every source that can hold it. */
export function whereToSet(option: OptionName): string {
  return `"${option}" in notify.config.json, ${envName(option)} in .env or the environment, or createNotify({ ${option} })`;
}

/** The tracking host: trackingHost, or baseUrl when empty, so one host serves pages and tracking unless told otherwise. */
export function trackingHost(config: Config): string {
  return config.trackingHost || config.baseUrl;
}
