import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Mailer } from './contract.ts';
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
      const raw =
        m.raw ??
        composeMime(
          { from: m.from, to: m.to, cc: m.cc, subject: m.subject, date: Date.now(), messageId: m.messageId ?? `<${m.sendToken}@notify.outbox>`, headers: m.headers },
          m.text,
          m.html,
        );
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${m.sendToken.replace(/[^A-Za-z0-9_-]/g, '')}.eml`;
      const tmp = join(root, `.${name}.tmp`);
      // What the receiving server would add from MAIL FROM, so the file shows where bounces go.
      await writeFile(tmp, m.envelopeFrom ? Buffer.concat([Buffer.from(`Return-Path: <${m.envelopeFrom}>\r\n`), raw]) : raw);
      await rename(tmp, join(root, name));
      return { messageId: m.messageId };
    },
  };
}
