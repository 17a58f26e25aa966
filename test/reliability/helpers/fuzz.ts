import assert from 'node:assert/strict';
import fc from 'fast-check';

/**
 * Hostile input for property-based tests: arbitrary text mixed with fragments that break naive
 * parsers and templates (markup, quotes, CR/LF, NUL, percent-escapes, path tricks, huge runs).
 * MARKER is markup that must never come back unescaped in an HTML answer.
 */
export const MARKER = '<x-fuzz onerror=alert(1)>';

const NASTY = [
  MARKER,
  '"><script>alert(1)</script>',
  "'><img src=x onerror=alert(1)>",
  'javascript:alert(1)',
  '\r\nSet-Cookie: a=b',
  '\u0000',
  '%00',
  '%0d%0a',
  '%E0%A4%A',
  '../../etc/passwd',
  '{{ 7 * 7 }}',
  '{% raw %}',
  '${process.exit()}',
  '__proto__',
  'constructor',
  '\u202e',
  '😀',
  '\ud800',
  ' ',
  '=',
  '&',
  '.',
];

export const hostileString = (maxLength = 200): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 1, arbitrary: fc.fullUnicodeString({ maxLength: 10 }) }, { weight: 3, arbitrary: fc.constantFrom(...NASTY) }), { maxLength: 12 })
    .map((parts) => parts.join('').slice(0, maxLength));

/** A long run now and then: length limits and linear-time parsing. */
export const hostileOrHuge = (): fc.Arbitrary<string> => fc.oneof({ weight: 9, arbitrary: hostileString() }, { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '<', '%', '"', '.'), fc.integer({ min: 1000, max: 100_000 })).map(([c, n]) => c.repeat(n)) });

/** The answer is not a server error, and an HTML answer does not echo markup it was given. */
export async function assertSafeResponse(res: Response, label: string): Promise<string> {
  const body = await res.text();
  assert.ok(res.status < 500, `${label}: status ${res.status}: ${body.slice(0, 200)}`);
  if ((res.headers.get('content-type') ?? '').includes('html')) assert.ok(!body.includes(MARKER) && !body.includes('<script>alert(1)'), `${label}: unescaped input in HTML: ${body.slice(0, 300)}`);
  for (const [name, value] of res.headers) assert.ok(!/[\r\n]/.test(value), `${label}: header ${name} carries CR/LF`);
  return body;
}

/** Runs count=numRuns, bounded in time, reporting the shrunk counterexample on failure. */
export const FUZZ_RUNS = Number(process.env.NOTIFY_FUZZ_RUNS ?? 300);
export const fuzzParams = (numRuns = FUZZ_RUNS) => ({ numRuns, interruptAfterTimeLimit: 30_000, markInterruptAsFailure: false });

/** Percent-encodes the UTF-8 bytes of s (lone surrogates become U+FFFD instead of throwing). */
export function encodeSegment(s: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(s)) out += /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** Either properly encoded, or as typed: raw `%` sequences (malformed ones too) reach the router. */
export const asPath = (s: string, raw: boolean): string => (raw ? s.replace(/[?#/\\]/g, '_') : encodeSegment(s));
