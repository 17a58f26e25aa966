import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { newToken } from '../../../src/core/tokens.ts';
import { createNotify } from '../../../src/notify.ts';
import { createStore } from '../../../src/store/index.ts';
import type { SmtpSink } from '../../helpers/smtp-sink.ts';

export const STEP_HTML = '<h1>Step {{ step.position }} for {{ contact.name }}</h1><p><a href="https://example.com/a">A</a></p>{notify_tracking_pixel}';

/**
 * A sequence of `steps` steps (all due at once: delay 0) through the public API, then `n` contacts
 * and their enrollments written in bulk (the tests are about processing, not enrolling), all due now.
 */
export async function seedDrips(url: string, n: number, steps: number): Promise<{ sequenceId: number; emails: string[] }> {
  const notify = await createNotify({ database: url, configFile: false, env: {}, logLevel: 'silent', mailer: 'log', fromEmail: 'news@example.com' });
  try {
    const seq = await notify.drips.createSequence({ name: 'rel', steps: Array.from({ length: steps }, (_, i) => ({ delayMinutes: 0, subject: `Step ${i + 1}`, html: STEP_HTML })) });
    const { db } = notify.context.store;
    const now = Date.now();
    const emails = Array.from({ length: n }, (_, i) => `drip${i}@example.com`);
    for (let i = 0; i < n; i += 500) {
      const slice = emails.slice(i, i + 500);
      const ids = await db
        .insertInto('notify_contacts')
        .values(slice.map((email, j) => ({ email, email_key: email, name: `D${i + j}`, status: 'subscribed', unsubscribe_token: newToken(), attributes: '{}', created_at: now, updated_at: now })))
        .returning('id')
        .execute();
      await db
        .insertInto('notify_enrollments')
        .values(ids.map((r) => ({ sequence_id: seq.id, contact_id: Number(r.id), status: 'active', step_index: 0, next_send_at: now - 1000, attempts: 0, created_at: now, updated_at: now })))
        .execute();
    }
    return { sequenceId: seq.id, emails };
  } finally {
    await notify.close();
  }
}

export async function enrollmentStatuses(url: string): Promise<Record<string, number>> {
  const store = createStore(url);
  try {
    const rows = await store.db.selectFrom('notify_enrollments').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  } finally {
    await store.close();
  }
}

/**
 * Moves claims and unsettled step rows back in time, as if `minutes` had passed since a crash;
 * `inFlight` counts the `sending` ones (handed to the mailer: in doubt), not the `queued` ones.
 */
export async function ageDripClaims(url: string, minutes: number): Promise<{ claims: number; inFlight: number }> {
  const store = createStore(url);
  const ms = minutes * 60_000;
  try {
    const claims = await sql`update notify_enrollments set locked_at = locked_at - ${ms} where status = 'processing'`.execute(store.db);
    const rows = await sql`update notify_sends set updated_at = updated_at - ${ms} where enrollment_id is not null and status in ('queued', 'sending') returning status`.execute(store.db);
    return { claims: Number(claims.numAffectedRows ?? 0), inFlight: rows.rows.filter((r) => (r as { status: string }).status === 'sending').length };
  } finally {
    await store.close();
  }
}

/**
 * Nobody got a step twice; every enrollment is completed; each step has one send row, `sent`
 * (delivered exactly once) or failed `interrupted` (in flight at a crash: at most once, not resent).
 */
export async function assertStepsOnce(url: string, emails: string[], steps: number, sink: SmtpSink): Promise<{ sent: number; interrupted: number }> {
  const perStep = new Map<string, number>();
  for (const m of sink.messages) {
    const subject = /^Subject: (.*)$/m.exec(m.raw.toString('utf8', 0, 4000))?.[1] ?? '?';
    for (const to of m.envelope.to) perStep.set(`${to} ${subject}`, (perStep.get(`${to} ${subject}`) ?? 0) + 1);
  }
  assert.deepEqual(
    [...perStep].filter(([, n]) => n > 1),
    [],
    'no step delivered twice',
  );
  const store = createStore(url);
  try {
    const rows = await store.db.selectFrom('notify_sends').select(['to_email', 'subject', 'status', 'error']).where('enrollment_id', 'is not', null).execute();
    assert.equal(rows.length, emails.length * steps, 'one send row per enrollment and step');
    let sent = 0;
    let interrupted = 0;
    for (const r of rows) {
      if (r.status === 'sent') {
        sent++;
        assert.equal(perStep.get(`${r.to_email} ${r.subject}`), 1, `${r.to_email} ${r.subject} is sent and was delivered once`);
      } else {
        assert.deepEqual({ status: r.status, error: r.error }, { status: 'failed', error: 'interrupted' }, `${r.to_email} ${r.subject}`);
        interrupted++;
      }
    }
    assert.deepEqual(await enrollmentStatuses(url), { completed: emails.length }, 'every enrollment completed');
    return { sent, interrupted };
  } finally {
    await store.close();
  }
}

/** drip step send rows by status */
export async function stepStatuses(url: string): Promise<Record<string, number>> {
  const store = createStore(url);
  try {
    const rows = await store.db.selectFrom('notify_sends').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).where('enrollment_id', 'is not', null).groupBy('status').execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  } finally {
    await store.close();
  }
}
