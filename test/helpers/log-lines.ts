import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

/** A pino logger at info whose lines a test reads back as parsed JSON objects. */
export function recordingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}
