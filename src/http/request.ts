import type { HttpBindings } from '@hono/node-server';
import type { Context as HonoContext } from 'hono';

/**
 * A request header, read from node's IncomingMessage when there is one: Hono's c.req.header()
 * builds a whole Headers object first, which costs more than a pixel response itself.
 */
export function header(c: HonoContext, name: Lowercase<string>): string {
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
  if (incoming) {
    const v = incoming.headers[name];
    return (Array.isArray(v) ? v[0] : v) ?? '';
  }
  return c.req.header(name) ?? '';
}
