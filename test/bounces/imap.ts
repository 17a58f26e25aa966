import { randomBytes } from 'node:crypto';
import { after, before } from 'node:test';
import { ImapFlow } from 'imapflow';
import { createBounceMailbox, type BounceMailboxOptions } from '../../src/bounces/index.ts';
import { applyWebhookEvents } from '../../src/core/webhook-events.ts';
import type { Notify } from '../../src/notify.ts';
import { insertSend } from '../helpers/sends.ts';
import { BOUNCE_DOMAIN, fixture } from './helpers.ts';

/** The test IMAP server (scripts/imap-test-server.sh start prints it); when set, its tests must pass. */
export const IMAP_URL = process.env.NOTIFY_TEST_IMAP_URL;
export const NO_IMAP = IMAP_URL ? false : 'NOTIFY_TEST_IMAP_URL is not set (scripts/imap-test-server.sh start)';

/** The test server's URL with another folder, port or password. */
export function mailboxUrl(over: { folder?: string; port?: number; pass?: string } = {}): string {
  const u = new URL(IMAP_URL!);
  if (over.port !== undefined) u.port = String(over.port);
  if (over.pass !== undefined) u.password = over.pass;
  if (over.folder !== undefined) u.pathname = `/${encodeURIComponent(over.folder)}`;
  return u.toString();
}

export function imapPort(): number {
  return Number(new URL(IMAP_URL!).port);
}

/** A client of our own, to put messages in and look at folders as a person's mail program would. */
export async function imapClient(): Promise<ImapFlow> {
  const u = new URL(IMAP_URL!);
  const client = new ImapFlow({ host: u.hostname, port: Number(u.port), secure: false, auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) }, logger: false });
  await client.connect();
  return client;
}

/** A client for the enclosing describe block, logged out after it. */
export function useImapClient(): () => ImapFlow {
  let client: ImapFlow | undefined;
  before(async () => {
    client = await imapClient();
  });
  after(() => client?.logout());
  return () => client!;
}

/** A folder pair no other test touches: `inbox` to read, `done` for processed reports. */
export async function freshFolders(client: ImapFlow): Promise<{ inbox: string; done: string }> {
  const id = `t-${randomBytes(5).toString('hex')}`;
  await client.mailboxCreate(id);
  return { inbox: id, done: `${id}-done` };
}

export async function appendAll(client: ImapFlow, folder: string, messages: (Buffer | string)[]): Promise<void> {
  for (const m of messages) await client.append(folder, Buffer.from(m.toString().replace(/\r?\n/g, '\r\n')));
}

export interface FolderMessage {
  uid: number;
  flags: string[];
  subject: string;
}

/** What a folder holds, oldest first; [] for an empty or missing folder. */
export async function folderMessages(client: ImapFlow, folder: string): Promise<FolderMessage[]> {
  const status = await client.status(folder, { messages: true }).catch(() => false as const);
  if (!status || !status.messages) return [];
  const lock = await client.getMailboxLock(folder);
  try {
    const all = await client.fetchAll('1:*', { uid: true, flags: true, envelope: true });
    return all.map((m) => ({ uid: m.uid, flags: [...(m.flags ?? [])].sort(), subject: m.envelope?.subject ?? '' }));
  } finally {
    lock.release();
    // Deselect: a folder left selected would show messages another connection moved away since.
    await client.mailboxClose();
  }
}

/** A fixture with its VERP token swapped for another, so each test has sends of its own. */
export function withToken(file: string, fixtureToken: string, token: string): Buffer {
  return Buffer.from(fixture(file).toString('latin1').replaceAll(fixtureToken, token), 'latin1');
}

/** A sent send to `email` with this token and Message-ID (the mailer's id the webhook path attributes by). */
export async function sendWithToken(notify: Notify, email: string, token: string, messageId: string): Promise<{ id: number; contactId: number }> {
  const send = await insertSend(notify, { email });
  await notify.context.store.db.updateTable('notify_sends').set({ token, message_id: messageId }).where('id', '=', send.id).execute();
  return { id: send.id, contactId: send.contactId };
}

/**
 * The bounce mailbox wired to an instance the way the worker wires it: sends are looked up by
 * token, and the events go through the webhook route's own apply (receipts, suppression, app events).
 */
export function mailboxFor(notify: Notify, extra: Partial<BounceMailboxOptions> & { url: string }) {
  return createBounceMailbox({
    bounceDomain: BOUNCE_DOMAIN,
    lookupSend: (token) => notify.context.store.sends.getByToken(token),
    apply: (events, receipt) => applyWebhookEvents(notify.context, 'bounce-mailbox', events, receipt.id),
    timeoutMs: 5_000,
    ...extra,
  });
}
