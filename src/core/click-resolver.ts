import type { Context } from '../context.ts';
import { type ParsedLinkRef, parseLinkRef, verifyLinkRef } from './link-refs.ts';
import { isWellFormedToken } from './tokens.ts';

export interface ClickTarget {
  url: string;
  /** the link's position in its message, for the click event */
  index: number;
}
export type ClickResolver = (token: string | undefined, ref: string | undefined | null) => ClickTarget | undefined | Promise<ClickTarget | undefined>;

export interface ClickResolverOptions {
  /** scopes kept in memory (oldest dropped first) */
  maxScopes?: number;
  /** verified signatures remembered */
  maxVerified?: number;
  /** least time between two re-reads of one scope for indexes it lacked */
  refreshMs?: number;
  /** monotonic milliseconds (tests steer it) */
  now?: () => number;
}

interface CachedScope {
  urls: string[];
  /** when an index this list lacks may read the scope again; 0 = at once (the list may be old) */
  retryAt: number;
}

/**
 * Click destination: the link reference must carry a valid HMAC for this send token (so a
 * tampered reference, a link from another send or a forged token fails with no query), and the
 * URL is then read from the scope's own link list, never from the request. Link lists are cached
 * per scope, so a click costs no query after the first of its message.
 *
 * A list only grows: a later batch whose recipients took another template branch, or a drip step
 * whose layout changed, appends links (core/link-lists.ts). So an index past the cached list,
 * under a valid signature, re-reads the scope before it is refused. That re-read is single-flight
 * and happens at most once per `refreshMs` per scope, so a genuine reference with a wrong index
 * cannot turn every request into a query (and a reference with no valid signature never queries).
 * Only http(s) URLs are ever returned.
 */
export function createClickResolver(ctx: Pick<Context, 'store' | 'secret' | 'log'>, opts: ClickResolverOptions = {}): ClickResolver {
  const { maxScopes = 10_000, maxVerified = 20_000, refreshMs = 1000, now = performance.now.bind(performance) } = opts;
  const isValid = verifiedRefs(ctx.secret, maxVerified);
  const { cache, loading, load } = scopeLinks(ctx, maxScopes);
  const target = (urls: string[], index: number): ClickTarget | undefined => (urls[index] ? { url: urls[index], index } : undefined);

  return (token, rawRef) => {
    if (!isWellFormedToken(token)) return undefined;
    const ref = parseLinkRef(rawRef);
    if (!ref || !isValid(token, ref)) return undefined;
    const index = ref.index;
    const entry = cache.get(ref.scope);
    if (entry) {
      if (index < entry.urls.length) return target(entry.urls, index);
      const pending = loading.get(ref.scope);
      if (!pending) {
        const t = now();
        if (t < entry.retryAt) return undefined;
        entry.retryAt = t + refreshMs;
      }
      return (pending ?? load(ref.scope)).then((urls) => target(urls, index));
    }
    return load(ref.scope).then((urls) => target(urls, index));
  };
}

/**
 * Signatures already verified (`token.scope.sig`): one HMAC costs more than the rest of a click,
 * and one recipient's clicks come in bursts (link scanners follow every link of an email, people
 * click twice). The signature covers the scope, not the index, so any link of that email hits.
 * Only successes are remembered, so forged references cannot fill it.
 */
function verifiedRefs(secret: string, maxVerified: number): (token: string, ref: ParsedLinkRef) => boolean {
  const verified = new Set<string>();
  return (token, ref) => {
    const key = `${token}.${ref.scope}.${ref.sig}`;
    if (verified.has(key)) return true;
    if (!verifyLinkRef(secret, token, ref)) return false;
    if (verified.size >= maxVerified) verified.delete(verified.values().next().value!);
    verified.add(key);
    return true;
  };
}

/** Each scope's safe link list, cached (oldest scope dropped first), with the reads under way. */
function scopeLinks(ctx: Pick<Context, 'store' | 'log'>, maxScopes: number) {
  const cache = new Map<string, CachedScope>();
  const loading = new Map<string, Promise<string[]>>();
  /** reads the scope (one read at a time per scope) and caches it; a failed re-read keeps the old list */
  function load(scope: string): Promise<string[]> {
    let p = loading.get(scope);
    if (!p) {
      const held = cache.get(scope);
      p = ctx.store.links
        .urlsForScope(scope)
        .then((urls) => {
          const safe = urls.map(safeDestination);
          const entry = cache.get(scope);
          if (entry) entry.urls = safe;
          else {
            if (cache.size >= maxScopes) cache.delete(cache.keys().next().value!);
            cache.set(scope, { urls: safe, retryAt: 0 });
          }
          return safe;
        })
        .catch((err) => {
          if (!held) throw err;
          ctx.log.warn({ err, scope }, 'could not re-read the links of a message; answering from memory');
          return held.urls;
        })
        .finally(() => loading.delete(scope));
      loading.set(scope, p);
    }
    return p;
  }
  return { cache, loading, load };
}

/** The normalised URL when it is absolute http(s), '' otherwise (`javascript:`, `//host`, junk). */
export function safeDestination(url: string): string {
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return '';
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : '';
  } catch {
    return '';
  }
}
