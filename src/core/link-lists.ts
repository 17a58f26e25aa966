import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';

/**
 * Stores a compiled message's destinations under its scope and returns each URL's position (the
 * index in click link references). A scope keeps what it already has, so a rerun or a second worker
 * gets the same positions; a URL the scope lacks (a layout changed between runs, another branch of a
 * per-recipient template) is appended. Concurrent appends are re-read and retried until consistent.
 */
export async function storeScopeLinks(ctx: Pick<Context, 'store' | 'clock'>, scope: string, urls: string[]): Promise<number[]> {
  if (urls.length === 0) return [];
  for (let attempt = 0; attempt < 5; attempt++) {
    const stored = await ctx.store.links.urlsForScope(scope);
    const positions = resolvePositions(stored, urls);
    if (positions.every((p) => p < stored.length)) return positions;
    const merged = [...stored];
    for (const [i, url] of urls.entries()) if (positions[i] >= stored.length) merged[positions[i]] = url;
    await ctx.store.links.ensureScope(scope, merged, ctx.clock.now());
    const check = await ctx.store.links.urlsForScope(scope);
    if (urls.every((u, i) => check[positions[i]] === u)) return positions;
  }
  throw new NotifyError('STORE_UNAVAILABLE', `Could not store the links of ${scope} (concurrent writers kept changing them)`, { scope });
}

function resolvePositions(stored: string[], urls: string[]): number[] {
  const at = new Map<string, number>();
  stored.forEach((u, i) => {
    if (u !== undefined && !at.has(u)) at.set(u, i);
  });
  let next = stored.length;
  return urls.map((u) => {
    let p = at.get(u);
    if (p === undefined) {
      p = next++;
      at.set(u, p);
    }
    return p;
  });
}
