import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { NotifyError } from '../../errors.ts';
import { MESSAGE_NAME } from '../../http/admin/outbox-files.ts';
import { createNotify, type Notify } from '../../notify.ts';
import { type DemoSeed, seedDemo } from '../demo-data.ts';
import { configSources } from '../config-sources.ts';
import { linkBase, startServer } from './serve-run.ts';

export interface Options {
  port: string;
  host: string;
  dir: string;
  serve: boolean;
}

/** marks a folder as the demo's own, so a rerun may clear what it wrote there and nothing else */
const MARKER = '.notify-demo';
const DB_FILES = ['notify.db', 'notify.db-wal', 'notify.db-shm', 'notify.db-journal'];

/**
 * `notify demo`: the whole loop on a fresh clone, no server to install. Its own folder (SQLite
 * database and `outbox:` mailer there, never the user's notify.db), sample contacts, a campaign
 * sent into the outbox, the server with the admin pages, and their URL with the admin token.
 * Every run starts fresh. --no-serve seeds and exits (scripts, tests).
 */
export async function runDemo(opts: Options, cmd: Command): Promise<void> {
  const port = Number(opts.port);
  if (!/^\d+$/.test(opts.port) || port > 65535) throw new NotifyError('INVALID_INPUT', `--port must be a number from 0 to 65535 (got ${JSON.stringify(opts.port)})`);
  const dir = resolve(opts.dir);
  const sources = configSources(cmd);
  // Only the admin token and log level come from the user's configuration; storage, mail and
  // addresses are the demo's own.
  const user = await loadConfig({}, sources);
  const adminToken = user.adminToken || randomBytes(18).toString('base64url');
  let seed: DemoSeed | undefined;
  // Called once the port is bound, so a second demo on a busy port fails before clearing the
  // folder a running one uses.
  const open = async (url: string): Promise<Notify> => {
    prepareFolder(dir);
    const notify = await createNotify({
      ...sources,
      database: `sqlite:${join(dir, 'notify.db')}`,
      mailer: `outbox:${join(dir, 'outbox')}`,
      baseUrl: url,
      trackingHost: '',
      adminToken,
      testMode: false,
      rateLimitStore: 'memory',
      fromName: user.fromName || 'notify demo',
      fromEmail: user.fromEmail || 'demo@example.com',
      logLevel: user.logLevel === 'info' ? 'warn' : user.logLevel,
    });
    try {
      seed = await seedDemo(notify, url);
      return notify;
    } catch (err) {
      await notify.close();
      throw err;
    }
  };
  if (!opts.serve) {
    const url = linkBase(opts.host, port);
    const notify = await open(url);
    await notify.close();
    console.log(summary(dir, url, adminToken, seed!, false));
    return;
  }
  const { url } = await startServer((bound) => open(linkBase(opts.host, Number(new URL(bound).port))), {
    port,
    host: opts.host,
    log: (line) => {
      if (!line.includes('listening on')) console.log(line);
    },
  });
  console.log(summary(dir, linkBase(opts.host, Number(new URL(url).port)), adminToken, seed!, true));
}

/**
 * Clears what an earlier run wrote (database files, outbox messages) in a folder that carries the
 * marker; refuses a folder with other content, so `--dir` pointing somewhere wrong deletes nothing.
 */
function prepareFolder(dir: string): void {
  if (existsSync(dir)) {
    const entries = readdirSync(dir);
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new NotifyError('INVALID_INPUT', `${dir} exists and was not made by notify demo; remove it or pass --dir <another folder>`, { dir });
    }
    for (const f of DB_FILES) rmSync(join(dir, f), { force: true });
    const outbox = join(dir, 'outbox');
    if (existsSync(outbox)) for (const f of readdirSync(outbox)) if (MESSAGE_NAME.test(f)) rmSync(join(outbox, f), { force: true });
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, MARKER), 'This folder belongs to `notify demo`; every run clears its database and outbox.\n');
}

function summary(dir: string, url: string, token: string, seed: DemoSeed, serving: boolean): string {
  const shown = relative(process.cwd(), dir) || '.';
  const lines = [
    `notify demo: ${seed.contacts} contacts; campaign ${seed.campaignId} sent ${seed.sent} messages (${seed.suppressed} suppressed: already unsubscribed)`,
  ];
  if (seed.drip) lines.push(`drip sequence "${seed.drip.sequence}": ${seed.drip.enrolled} enrolled, first step sent ${seed.drip.sent}`);
  lines.push(`database ${shown}/notify.db, messages in ${shown}/outbox/ (.eml files any mail client opens)`);
  const stats = `NOTIFY_DATABASE=sqlite:${shown}/notify.db npx notify stats ${seed.campaignId}`;
  // Without a server there is no admin page to point at: the next `notify demo` (which serves) clears
  // this folder and makes a new token, so a URL printed now would never work.
  if (!serving) return [...lines, `Its figures: ${stats}`, 'Not serving (--no-serve): run `npx notify demo` for the admin pages.'].join('\n');
  const admin = `${url.replace('://', `://admin:${encodeURIComponent(token)}@`)}/notify/admin`;
  lines.push(
    '',
    `Admin: ${admin}`,
    `       (or ${url}/notify/admin with any user name and the password ${token})`,
    '',
    'Try it: Outbox -> open a message (its pixel counts an open) -> "See your click counted" (a click)',
    `-> open another message and Unsubscribe; the campaign page (${url}/notify/admin/campaigns/${seed.campaignId}) shows each one.`,
    `From another shell: ${stats}`,
    'Ctrl+C stops the server; the next `notify demo` starts fresh.',
  );
  return lines.join('\n');
}
