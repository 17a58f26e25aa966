import type { Context } from '../context.ts';
import type { TrackedEvent } from '../core/tracking-recorder.ts';
import type { ClickTarget } from '../core/click-resolver.ts';

/** What the request says about itself, as both the Hono routes and the node:http fast path read it. */
export interface TrackingRequest {
  token: string;
  method: string;
  userAgent: string;
}

// Shared by every event without metadata (nothing writes into an event's metadata): one object
// less per request, and one less for the buffer to hold until its flush.
const NO_METADATA: Record<string, unknown> = Object.freeze({});

/** The open event recorded for a well-formed token. trackIpAddress covers clicks only (spec). */
export function openEvent(ctx: Pick<Context, 'clock'>, r: TrackingRequest): TrackedEvent {
  return { type: 'open', token: r.token, at: ctx.clock.now(), link_index: null, metadata: NO_METADATA, method: r.method, userAgent: r.userAgent };
}

/** The click event for a resolved link; the IP goes into metadata only with trackIpAddress. */
export function clickEvent(ctx: Pick<Context, 'clock' | 'config'>, r: TrackingRequest, target: ClickTarget, ip: () => string): TrackedEvent {
  return {
    type: 'click',
    token: r.token,
    at: ctx.clock.now(),
    link_index: target.index,
    metadata: ctx.config.trackIpAddress ? { ip: ip() } : NO_METADATA,
    method: r.method,
    userAgent: r.userAgent,
  };
}

/**
 * The 302 to a click's destination, with an empty body: no-referrer, so the destination learns
 * nothing of the webmail page. The same header set on both paths (a Response with a '' body would
 * otherwise gain text/plain and no length). Names in lower case, as node:http compares them.
 */
export const redirectHeaders = (url: string) => ({ location: url, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'content-type': 'text/plain; charset=utf-8', 'content-length': '0' });
