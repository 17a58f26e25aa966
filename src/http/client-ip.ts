import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context as HonoContext } from 'hono';

/**
 * The client IP you can trust. With trustProxy false (default) it is the socket's address and
 * X-Forwarded-For is ignored, so a client cannot choose its own IP. With trustProxy true the
 * left-most X-Forwarded-For entry is used (the proxy in front must overwrite, not append, it).
 * IPv4-mapped IPv6 addresses (::ffff:1.2.3.4) are returned as IPv4.
 * Returns '' when there is no socket (a bare notify.fetch(request) call).
 */
export function clientIp(c: HonoContext, trustProxy: boolean): string {
  let address: string | undefined;
  try {
    address = getConnInfo(c).remote.address;
  } catch {
    address = undefined; // not behind @hono/node-server
  }
  return clientIpFrom(c.req.header('x-forwarded-for'), address, trustProxy);
}

/** The same rule from the raw parts: the X-Forwarded-For header (if any) and the socket's address. */
export function clientIpFrom(forwardedFor: string | undefined, socketAddress: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const first = forwardedFor?.split(',')[0]?.trim();
    if (first) return unmapIpv4(first);
  }
  return socketAddress ? unmapIpv4(socketAddress) : '';
}

export function unmapIpv4(ip: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return m ? m[1] : ip;
}
