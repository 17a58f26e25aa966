import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { AddressObject } from 'mailparser';
import type { Config } from '../../config.ts';

/**
 * Reads the .eml files the `outbox:<dir>` mailer writes. Only plain files directly in that folder,
 * named like a message file, are ever opened: no path separators, no symlinks, a size cap.
 */
export const MESSAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.eml$/;
const MAX_BYTES = 25 * 1024 * 1024;
/** above this many files, order by name (writers prefix a timestamp) instead of one stat per file */
const STAT_LIMIT = 5000;

export interface OutboxSummary {
  name: string;
  size: number;
  mtime: Date;
}

export interface OutboxMessage {
  name: string;
  size: number;
  subject: string;
  from: string;
  to: string;
  cc: string;
  date: Date | null;
  /** headers as they appear, decoded, for display */
  headers: { name: string; value: string }[];
  html: string | null;
  text: string | null;
  attachments: { filename: string; contentType: string; size: number }[];
}

/** The folder of the `outbox:<dir>` mailer, or undefined when another mailer is configured. */
export function outboxDir(config: Pick<Config, 'mailer'>, cwd = process.cwd()): string | undefined {
  const m = typeof config.mailer === 'string' ? /^outbox:(.+)$/.exec(config.mailer) : null;
  return m ? resolve(cwd, m[1]) : undefined;
}

/** Newest first. A missing folder is an empty outbox (nothing was sent yet). */
export async function listOutbox(dir: string): Promise<OutboxSummary[]> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile() && MESSAGE_NAME.test(e.name)).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  if (names.length > STAT_LIMIT) return names.sort().reverse().map((name) => ({ name, size: 0, mtime: new Date(0) }));
  const out: OutboxSummary[] = [];
  for (const name of names) {
    const st = await lstat(join(dir, name)).catch(() => undefined);
    if (st?.isFile()) out.push({ name, size: st.size, mtime: st.mtime });
  }
  return out.sort((a, b) => b.mtime.getTime() - a.mtime.getTime() || (a.name < b.name ? 1 : -1));
}

export async function readRaw(dir: string, name: string): Promise<Buffer | undefined> {
  if (!MESSAGE_NAME.test(name)) return undefined;
  const path = join(dir, name);
  const st = await lstat(path).catch(() => undefined);
  if (!st?.isFile() || st.size > MAX_BYTES) return undefined;
  return readFile(path);
}

export async function readMessage(dir: string, name: string): Promise<OutboxMessage | undefined> {
  const raw = await readRaw(dir, name);
  if (!raw) return undefined;
  // Loaded on first use, not at start-up: only the outbox viewer parses messages.
  const { simpleParser } = await import('mailparser');
  const mail = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true });
  const headers = mail.headerLines.map((h) => {
    const colon = h.line.indexOf(':');
    return { name: h.line.slice(0, colon), value: h.line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ').trim() };
  });
  return {
    name,
    size: raw.length,
    subject: mail.subject ?? '',
    from: addresses(mail.from),
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    date: mail.date ?? null,
    headers,
    html: typeof mail.html === 'string' ? mail.html : null,
    text: mail.text ?? null,
    attachments: mail.attachments.map((a) => ({ filename: a.filename ?? '', contentType: a.contentType, size: a.size })),
  };
}

function addresses(a: AddressObject | AddressObject[] | undefined): string {
  if (!a) return '';
  return (Array.isArray(a) ? a : [a]).map((x) => x.text).join(', ');
}
