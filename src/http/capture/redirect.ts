const BASE = 'http://notify.invalid';

/**
 * A path on this site, or undefined. Only root-relative paths pass: `//evil.com`, `/\evil.com`,
 * `https://evil.com`, `javascript:...`, control characters, and paths that normalise to `//...`
 * (e.g. `/.//evil.com`) are all refused, so a Location we send can never leave the site.
 */
export function safeRelativePath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return undefined;
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return undefined;
  if (/[\u0000-\u0020\u007f-\u009f]/.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return undefined;
  }
  if (url.origin !== BASE || url.pathname.startsWith('//')) return undefined;
  return value;
}

/**
 * The Referer as a path on this site, when the page that posted is on this site (the request's own
 * origin or baseUrl's); otherwise undefined. Used to send a form post back to its page.
 */
export function sameSiteReferer(referer: string | undefined, origins: string[]): string | undefined {
  if (!referer) return undefined;
  let url: URL;
  try {
    url = new URL(referer);
  } catch {
    return undefined;
  }
  if (!origins.includes(url.origin)) return undefined;
  return safeRelativePath(url.pathname + url.search);
}

/** Where consent was given: the posting page's origin and path (no query, which may hold personal data). */
export function consentSource(referer: string | undefined): string {
  if (!referer) return 'capture';
  try {
    const url = new URL(referer);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'capture';
    return (url.origin + url.pathname).slice(0, 500);
  } catch {
    return 'capture';
  }
}
