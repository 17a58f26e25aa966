import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Notify } from '../../notify.ts';
import type { RawBodyRequest } from './raw-body.ts';

/** The parts of a Fastify 5 instance the plugin uses (no type dependency on fastify). */
interface FastifyLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(type: string, opts: { parseAs: 'buffer'; bodyLimit?: number }, parser: (req: unknown, body: Buffer, done: (err: Error | null, body?: Buffer) => void) => void): void;
  route(opts: { method: string[]; url: string; handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => void }): void;
}
interface FastifyRequestLike {
  raw: IncomingMessage;
  body?: unknown;
}
interface FastifyReplyLike {
  raw: ServerResponse;
  hijack(): void;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Fastify 5 plugin for the /notify/* controller: `await app.register(notifyFastify(notify))`.
 * The plugin is encapsulated: inside it every content type is read as a Buffer (your JSON and
 * form parsers elsewhere are untouched), and that Buffer is handed on as the exact request body,
 * so webhook signatures verify whatever the rest of the app parses. The reply is hijacked and
 * written by the controller itself.
 */
export function notifyFastify(notify: Pick<Notify, 'listener'>, opts: { bodyLimit?: number } = {}) {
  return async function notifyPlugin(app: FastifyLike): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.bodyLimit ?? 1024 * 1024 }, (_req, body, done) => done(null, body));
    app.route({
      method: METHODS,
      url: '/notify/*',
      handler(request, reply) {
        const raw = request.raw as RawBodyRequest;
        if (Buffer.isBuffer(request.body)) raw.rawBody = request.body;
        reply.hijack();
        notify.listener(raw, reply.raw);
      },
    });
  };
}
