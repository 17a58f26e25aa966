import { mkdir, open, rename } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Mailer } from './contract.ts';
import { headerField } from './header-fold.ts';
import { composeMime } from './mime.ts';

/**
 * `outbox:<dir>`: every message becomes `<dir>/<time>-<sendToken>.eml`, a complete RFC 5322 file any
 * mail client opens. The embedded default, so everything works with no SMTP server. Written to a
 * temporary name and renamed, so a reader never sees half a message.
 */
export function createOutboxMailer(dir: string, cwd = process.cwd()): Mailer {
  const root = resolve(cwd, dir);
  let ready: Promise<unknown> | undefined;
  return {
    name: 'outbox',
    async send(m) {
      // A folder that could not be made is tried again on the next message, not failed forever.
      ready ??= mkdir(root, { recursive: true }).catch((err) => {
        ready = undefined;
        throw err;
      });
      await ready;
      // the dispatcher's messages come as a list of buffers: written as they are, in one writev
      const parts =
        m.rawParts ??
        (m.raw ? [m.raw] : [composeMime({ from: m.from, to: m.to, cc: m.cc, subject: m.subject, date: Date.now(), messageId: m.messageId ?? `<${m.sendToken}@notify.outbox>`, headers: m.headers }, m.text, m.html)]);
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${m.sendToken.replace(/[^A-Za-z0-9_-]/g, '')}.eml`;
      const tmp = join(root, `.${name}.tmp`);
      // What the receiving server would add from MAIL FROM, so the file shows where bounces go.
      const file = await open(tmp, 'w');
      try {
        const buffers = m.envelopeFrom ? [Buffer.from(`${headerField('Return-Path', `<${m.envelopeFrom}>`)}\r\n`), ...parts] : [...parts];
        const { bytesWritten } = await file.writev(buffers);
        const length = buffers.reduce((n, b) => n + b.length, 0);
        if (bytesWritten !== length) throw new Error(`outbox: wrote ${bytesWritten} of ${length} bytes of ${name}`);
      } finally {
        await file.close();
      }
      await rename(tmp, join(root, name));
      return { messageId: m.messageId };
    },
  };
}
