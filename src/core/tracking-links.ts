import type { Context } from '../context.ts';
import { type ParsedLinkRef, parseLinkRef, verifyLinkRef } from './links.ts';
import { isWellFormedToken } from './tokens.ts';

/**
 * Click destination: the link reference must carry a valid HMAC for this send token (so a
 * tampered reference, a link from another send or a forged token fails with no query), and the
 * URL is then read from the scope's own link list, never from the request. Link lists never
 * change once written, so they are cached per scope: a click costs no query after the first of
 * its message. Only http(s) URLs are ever returned.
 */
export interface ClickTarget {
  url: string;
  /** the link's position in its message, for the click event */
  index: number;
}
export type ClickResolver = (token: string | undefined, ref: string | undefined | null) => ClickTarget | undefined | Promise<ClickTarget | undefined>;

export function createClickResolver(ctx: Pick<Context, 'store' | 'secret'>, maxScopes = 10_000, maxVerified = 20_000): ClickResolver {
  const cache = new Map<string, string[]>();
  const loading = new Map<string, Promise<string[]>>();
  // Signatures already verified (`token.scope.sig`): one HMAC costs more than the rest of a click,
  // and one recipient's clicks come in bursts (link scanners follow every link of an email, people
  // click twice). The signature covers the scope, not the index, so any link of that email hits.
  // Only successes are remembered, so forged references cannot fill it.
  const verified = new Set<string>();
  const isValid = (token: string, ref: ParsedLinkRef) => {
    const key = `${token}.${ref.scope}.${ref.sig}`;
    if (verified.has(key)) return true;
    if (!verifyLinkRef(ctx.secret, token, ref)) return false;
    if (verified.size >= maxVerified) verified.delete(verified.values().next().value!);
    verified.add(key);
    return true;
  };

  function load(scope: string): Promise<string[]> {
    let p = loading.get(scope);
    if (!p) {
      p = ctx.store.links
        .urlsForScope(scope)
        .then((urls) => {
          const safe = urls.map(safeDestination);
          // An empty list may be a message whose links are not committed yet: do not remember it.
          if (safe.length > 0) {
            if (cache.size >= maxScopes) cache.delete(cache.keys().next().value!);
            cache.set(scope, safe);
          }
          return safe;
        })
        .finally(() => loading.delete(scope));
      loading.set(scope, p);
    }
    return p;
  }

  return (token, rawRef) => {
    if (!isWellFormedToken(token)) return undefined;
    const ref = parseLinkRef(rawRef);
    if (!ref || !isValid(token, ref)) return undefined;
    const pick = (urls: string[]) => (urls[ref.index] ? { url: urls[ref.index], index: ref.index } : undefined);
    const urls = cache.get(ref.scope);
    return urls ? pick(urls) : load(ref.scope).then(pick);
  };
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
