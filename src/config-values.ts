import { z } from 'zod';
import { closestName } from './closest-name.ts';
import { DKIM_TAG_MAX, fromAddressProblem } from './core/header-limits.ts';
import { OUTBOUND_EVENT_TYPES } from './core/storage/outbound.ts';
import { limiterStores } from './http/rate-limit/registry.ts';
import { asciiDomain } from './mail/address.ts';
import { mailTransports } from './mail/registry.ts';
import { listOf } from './registry.ts';
import { webhookDrivers } from './webhooks/registry.ts';

// The kinds of value an option takes: zod types that coerce text (a config file, .env, the environment)
// and say what was expected.

export const int = (min: number) => z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be a whole number').min(min, `must be at least ${min}`);
export const bool = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const s = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off', ''].includes(s)) return false;
  return v;
}, z.boolean({ invalid_type_error: 'must be true or false' }));
export const list = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v),
  z.array(z.string()),
);
/** minutes as a list: `[1, 5, 15]` or the text `"1,5,15"`; fractions allowed (tests, a local relay) */
export const backoff = z.preprocess(
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
export const url = (what: string) =>
  z
    .string()
    .refine((v) => v === '' || /^https?:\/\/(?!\/)[\x21\x23-\x3b\x3d\x3f-\x7e]+$/i.test(v), `must be an http(s) URL for ${what}: ASCII (an international domain as punycode), without spaces or <>"`)
    .refine((v) => v.length <= 900, 'must be at most 900 characters')
    .transform((v) => v.replace(/\/+$/, ''));

export const databaseUrl = z.string().refine((v) => /^sqlite:.+/.test(v) || /^postgres(ql)?:\/\/[^\s]+$/.test(v), {
  message: "must be 'sqlite:<path>' or 'postgres://user@host:port/db'",
});
export const mailerSpec = z.union([
  z.string().refine((v) => mailTransports.accepts(v), () => ({ message: `must be ${listOf([...mailTransports.forms, 'a Mailer object'])}` })),
  z.custom<object>((v) => typeof v === 'object' && v !== null && typeof (v as { send?: unknown }).send === 'function', 'must be a Mailer object with send()'),
]);
export const webhookDriverSpec = z.union([
  z.string().refine(
    (v) => v === '' || webhookDrivers.accepts(v),
    () => ({
      message: `must be empty, one of ${webhookDrivers.names.join(', ')} (or their class names ${webhookDrivers.aliases.join(', ')}), '<module>#<ExportName>' or a WebhookDriverInterface object`,
    }),
  ),
  z.custom<object>((v) => typeof v === 'object' && v !== null && typeof (v as { verifySignature?: unknown }).verifySignature === 'function', 'must be a WebhookDriverInterface'),
]);
/** `{ domainName, keySelector, privateKey }`, or the same as JSON text (from .env or the environment). */
export const dkimSpec = z.preprocess(
  jsonText(undefined),
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
export const webhooksOutSpec = z.preprocess(
  jsonText([]),
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
export const domainName = z.string().refine((v) => v === '' || /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(v), 'must be a domain name');

export const rateLimitStore = z.string().refine((v) => limiterStores.accepts(v), () => ({ message: `must be ${listOf(limiterStores.forms)}` }));

/**
 * An object option may come as JSON text (from .env or the environment): parsed, blank as `empty`;
 * text that is no JSON stays text, so the schema's own message names what was expected.
 */
function jsonText(empty: unknown): (v: unknown) => unknown {
  return (v) => {
    if (typeof v !== 'string') return v;
    if (v.trim() === '') return empty;
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  };
}

/** A from address must fit its header lines: the From line and the Message-ID made from its domain. */
export function fitsFromLine(v: string, ctx: z.RefinementCtx): void {
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
