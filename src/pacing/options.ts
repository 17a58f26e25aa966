import { z } from 'zod';
import { normalizeDomain } from './pacer.ts';

const perSecond = (zero: 'allowed' | 'refused') =>
  z.coerce
    .number({ invalid_type_error: 'must be a number of messages per second' })
    .finite('must be a number of messages per second')
    .refine((n) => (zero === 'allowed' ? n >= 0 : n > 0), zero === 'allowed' ? 'must be 0 (no limit) or more messages per second (fractions allowed: 0.5 = one every 2 s)' : 'must be more than 0 messages per second (leave the domain out for no limit)');

/** A host name as a recipient address has it after `@`: no port, scheme, path or user. */
const DOMAIN = /^(?=.{1,253}$)(?!-)[\p{L}\p{N}-]{1,63}(?<!-)(\.(?!-)[\p{L}\p{N}-]{1,63}(?<!-))*\.?$/u;

/** `sendRate`: messages per second over every worker sharing `rateLimitStore`; 0 = no limit. */
export const sendRateOption = z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), perSecond('allowed').default(0));

/**
 * `domainRates`: `{ "gmail.com": 5 }`, the same as JSON text, or `gmail.com=5,outlook.com=10` (from
 * .env or the environment). Domains are matched in lower case and ASCII (punycode).
 */
export const domainRatesOption = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    const text = v.trim();
    if (text === '') return {};
    if (text.startsWith('{')) {
      try {
        return JSON.parse(text);
      } catch {
        return v;
      }
    }
    return Object.fromEntries(
      text.split(',').map((pair) => {
        const eq = pair.lastIndexOf('=');
        return eq < 0 ? [pair.trim(), undefined] : [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()];
      }),
    );
  },
  z
    .record(z.string(), perSecond('refused'), { invalid_type_error: 'must be an object { "<domain>": <messages per second> }, JSON text of one, or "<domain>=<rate>,..."' })
    .superRefine((rates, ctx) => {
      const seen = new Map<string, string>();
      for (const domain of Object.keys(rates)) {
        if (!DOMAIN.test(domain)) {
          ctx.addIssue({ code: 'custom', path: [domain], message: 'must be a recipient domain such as gmail.com (no port, scheme or @)' });
          continue;
        }
        const key = normalizeDomain(domain);
        const other = seen.get(key);
        if (other !== undefined) ctx.addIssue({ code: 'custom', path: [domain], message: `names the same domain as '${other}'` });
        seen.set(key, domain);
      }
    })
    .transform((rates) => Object.freeze(Object.fromEntries(Object.entries(rates).map(([d, r]) => [normalizeDomain(d), r])))),
);
