import assert from 'node:assert/strict';
import type { Notify } from '../../src/notify.ts';
import type { SmtpSink } from '../helpers/smtp-sink.ts';

/** Sends a campaign in one run and returns the addresses the SMTP sink received, sorted. */
export async function reached(n: Notify, sink: SmtpSink, campaignId: number): Promise<string[]> {
  const start = sink.messages.length;
  const run = await n.campaigns.send(campaignId);
  assert.equal(run.remaining, 0);
  await sink.waitFor(start + run.sent);
  return sink.messages
    .slice(start)
    .flatMap((m) => m.envelope.to)
    .sort();
}

/** emails of every contact a contacts.list query returns, following `next` to the end */
export async function allEmails(n: Notify, query: Parameters<Notify['contacts']['list']>[0] = {}): Promise<string[]> {
  const out: string[] = [];
  let after: string | null = null;
  do {
    const page = await n.contacts.list({ ...query, after });
    out.push(...page.contacts.map((c) => c.email));
    after = page.next;
  } while (after);
  return out.sort();
}
