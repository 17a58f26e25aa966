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
  if (trustProxy) {
    const xff = c.req.header('x-forwarded-for');
    const first = xff?.split(',')[0]?.trim();
    if (first) return unmapIpv4(first);
  }
  let address: string | undefined;
  try {
    address = getConnInfo(c).remote.address;
  } catch {
    address = undefined; // not behind @hono/node-server
  }
  return address ? unmapIpv4(address) : '';
}

export function unmapIpv4(ip: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return m ? m[1] : ip;
}
