import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { retryDelay, settleOutcome, settleStepOutcome } from '../../src/core/deferral.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * A send that fails for a reason that may pass (SMTP 4xx, a refused connection) waits as
 * `deferred` and is retried by later runs at 1, 5, 15 ... minutes (an injected clock moves time),
 * until maxRetries attempts; an SMTP 5xx fails at once. The sink refuses RCPT TO per address.
 */
async function sendRow(notify: Notify, campaignId: number, email: string) {
  return notify.context.store.db
    .selectFrom('notify_sends')
    .select(['status', 'attempts', 'next_attempt_at', 'error', 'token'])
    .where('campaign_id', '=', campaignId)
    .where('to_email', '=', email)
    .executeTakeFirstOrThrow();
}

const delivered = (sink: SmtpSink, email: string) => sink.messages.filter((m) => m.envelope.to.includes(email));

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

forEachEngine('transient failures are deferred, retried with backoff, then final', (h) => {
  const clock = manualClock(Date.UTC(2026, 4, 1, 9));
  let sink: SmtpSink;
  let notify: Notify;
  let n = 0;
  /** a campaign to a fresh list of these addresses */
  const campaignTo = async (emails: string[]) => {
    const list = `d${n++}`;
    for (const email of emails) await notify.contacts.upsert({ email, lists: [list] });
    return notify.campaigns.create({ subject: 'Deferral', text: 'Hello {{ contact.email }}', list });
  };
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, maxRetries: 3, clock }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('421 to the first two attempts: deferred at +1 min, then +5 min, then sent once; stats count it only when sent', async () => {
    sink.failFor('slow@example.com', 2);
    const c = await campaignTo(['a@example.com', 'slow@example.com', 'b@example.com']);
    const first = await notify.campaigns.send(c.id);
    assert.deepEqual([first.sent, first.failed, first.deferred, first.waiting, first.done, first.status], [2, 0, 1, 1, false, 'sending']);
    let row = await sendRow(notify, c.id, 'slow@example.com');
    assert.deepEqual([row.status, Number(row.attempts), Number(row.next_attempt_at)], ['deferred', 1, clock.now() + minutes(1)]);
    assert.match(row.error ?? '', /421 4\.7\.0 Try again later/);
    assert.equal(first.nextAttemptAt?.getTime(), clock.now() + minutes(1));
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 3, sent: 2, failed: 0, opened: 0, clicked: 0 });

    // not due yet: a run changes nothing and the mail server sees no new attempt
    clock.advance(minutes(1) - 1);
    const early = await notify.campaigns.send(c.id);
    assert.deepEqual([early.sent, early.deferred, early.waiting, early.status], [0, 0, 1, 'sending']);
    assert.equal(sink.attempts.get('slow@example.com'), 1);

    clock.advance(1);
    const second = await notify.campaigns.send(c.id);
    assert.deepEqual([second.sent, second.deferred, second.waiting], [0, 1, 1]);
    row = await sendRow(notify, c.id, 'slow@example.com');
    assert.deepEqual([row.status, Number(row.attempts), Number(row.next_attempt_at)], ['deferred', 2, clock.now() + minutes(5)]);

    clock.advance(minutes(5));
    const third = await notify.campaigns.send(c.id);
    assert.deepEqual([third.sent, third.failed, third.deferred, third.waiting, third.done, third.status], [1, 0, 0, 0, true, 'sent']);
    row = await sendRow(notify, c.id, 'slow@example.com');
    assert.deepEqual([row.status, Number(row.attempts), row.next_attempt_at, row.error], ['sent', 3, null, null]);
    const got = delivered(sink, 'slow@example.com');
    assert.equal(got.length, 1, 'delivered once');
    assert.match(got[0].parsed.text ?? '', /Hello slow@example\.com/);
    assert.equal(sink.attempts.get('slow@example.com'), 3);
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 3, sent: 3, failed: 0, opened: 0, clicked: 0 });
  });

  test('a 421 forever: failed after maxRetries (3) attempts, with the last reply and the count as the reason', async () => {
    sink.failFor('never@example.com', Number.POSITIVE_INFINITY);
    const c = await campaignTo(['never@example.com']);
    assert.equal((await notify.campaigns.send(c.id)).deferred, 1);
    clock.advance(minutes(1));
    assert.equal((await notify.campaigns.send(c.id)).deferred, 1);
    clock.advance(minutes(5));
    const last = await notify.campaigns.send(c.id);
    assert.deepEqual([last.sent, last.failed, last.deferred, last.waiting, last.status], [0, 1, 0, 0, 'sent']);
    const row = await sendRow(notify, c.id, 'never@example.com');
    assert.deepEqual([row.status, Number(row.attempts), row.next_attempt_at], ['failed', 3, null]);
    assert.match(row.error ?? '', /421 .*\(attempt 3 of 3; no more retries\)/);
    assert.equal(sink.attempts.get('never@example.com'), 3);
    assert.equal(delivered(sink, 'never@example.com').length, 0);
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 1, sent: 0, failed: 1, opened: 0, clicked: 0 });
    // nothing is tried after the end, however much later
    clock.advance(minutes(24 * 60));
    await notify.campaigns.send(c.id);
    assert.equal(sink.attempts.get('never@example.com'), 3);
  });

  test('a 550 is failed at once: one attempt, no retry time', async () => {
    sink.failFor('gone@example.com', Number.POSITIVE_INFINITY, '550 5.1.1 No such user');
    const c = await campaignTo(['gone@example.com', 'here@example.com']);
    const r = await notify.campaigns.send(c.id);
    assert.deepEqual([r.sent, r.failed, r.deferred, r.waiting, r.status], [1, 1, 0, 0, 'sent']);
    const row = await sendRow(notify, c.id, 'gone@example.com');
    assert.deepEqual([row.status, Number(row.attempts), row.next_attempt_at], ['failed', 1, null]);
    assert.match(row.error ?? '', /550 5\.1\.1 No such user/);
    assert.equal(sink.attempts.get('gone@example.com'), 1);
  });

  test('a contact who unsubscribes while deferred is not retried: suppressed', async () => {
    sink.failFor('leaver@example.com', 1);
    const c = await campaignTo(['leaver@example.com']);
    assert.equal((await notify.campaigns.send(c.id)).deferred, 1);
    await notify.context.store.contacts.setStatus((await notify.contacts.get('leaver@example.com'))!.id, 'unsubscribed', clock.now());
    clock.advance(minutes(1));
    const r = await notify.campaigns.send(c.id);
    assert.deepEqual([r.suppressed, r.sent, r.waiting, r.status], [1, 0, 0, 'sent']);
    assert.equal(sink.attempts.get('leaver@example.com'), 1);
  });

  test('a contact unsubscribed through notify while deferred: the waiting send is suppressed at once and counted so', async () => {
    sink.failFor('quitter@example.com', 1);
    const c = await campaignTo(['quitter@example.com']);
    assert.equal((await notify.campaigns.send(c.id)).deferred, 1);
    await notify.contacts.unsubscribe('quitter@example.com');
    assert.equal((await sendRow(notify, c.id, 'quitter@example.com'))?.status, 'suppressed', 'settled by the unsubscribe, not by a later run');
    assert.equal((await notify.campaigns.getCampaignReport(c.id)).suppressed, 1);
    clock.advance(minutes(1));
    const r = await notify.campaigns.send(c.id);
    assert.deepEqual([r.suppressed, r.sent, r.waiting, r.status], [0, 0, 0, 'sent'], 'nothing left for the run but to finish the campaign');
    assert.equal(sink.attempts.get('quitter@example.com'), 1);
  });

  test('cancel settles the waiting sends: deferred becomes cancelled, counted in the total but neither sent nor failed, never tried again', async () => {
    sink.failFor('late@example.com', Number.POSITIVE_INFINITY);
    const c = await campaignTo(['ok@example.com', 'late@example.com']);
    assert.equal((await notify.campaigns.send(c.id)).deferred, 1);
    const cancelled = await notify.campaigns.cancel(c.id);
    assert.equal(cancelled.status, 'cancelled');
    const row = await sendRow(notify, c.id, 'late@example.com');
    assert.deepEqual([row.status, Number(row.attempts), row.next_attempt_at], ['cancelled', 1, null]);
    assert.match(row.error ?? '', /421/, 'the last reply is kept');
    assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 2, sent: 1, failed: 0, opened: 0, clicked: 0 });
    assert.equal((await notify.context.store.sends.waiting(c.id)).count, 0);
    clock.advance(minutes(60));
    const r = await notify.campaigns.send(c.id);
    assert.deepEqual([r.sent, r.deferred, r.status], [0, 0, 'cancelled']);
    assert.equal(sink.attempts.get('late@example.com'), 1);
  });

  test('cancel of a paused campaign settles its deferred sends too; pause alone keeps them', async () => {
    sink.failFor('later@example.com', 1);
    const c = await campaignTo(['later@example.com']);
    assert.equal((await notify.campaigns.send(c.id)).deferred, 1);
    await notify.campaigns.pause(c.id);
    assert.equal((await sendRow(notify, c.id, 'later@example.com')).status, 'deferred', 'a paused campaign keeps its retries');
    await notify.campaigns.cancel(c.id);
    assert.equal((await sendRow(notify, c.id, 'later@example.com')).status, 'cancelled');
    await assert.rejects(notify.campaigns.cancel(c.id), (err) => isNotifyError(err, 'INVALID_STATE') && /cancelled/.test(err.message), 'cancel is final');
    await assert.rejects(notify.campaigns.cancel(999_999), (err) => isNotifyError(err, 'NOT_FOUND'));
  });

  test('notify.send() makes one attempt: a 421 is a failed record the caller reads at once (the reply in error), never deferred', async () => {
    sink.failFor('receipt@example.com', 1);
    const rec = await notify.send({ to: 'receipt@example.com', subject: 'Receipt', text: 'Paid', category: 'transactional' });
    assert.deepEqual([rec.status, rec.next_attempt_at], ['failed', null]);
    assert.match(rec.error ?? '', /421 4\.7\.0 Try again later/);
    clock.advance(minutes(60));
    await notify.campaigns.send((await campaignTo(['other@example.com'])).id);
    assert.equal((await notify.context.store.sends.getById(rec.id))?.status, 'failed', 'no run picks it up later');
    assert.equal(sink.attempts.get('receipt@example.com'), 1);
  });
});

forEachEngine('a mail server that refuses connections defers every send', (h) => {
  test('connection refused: deferred (not failed), the campaign stays sending, stats unchanged', async () => {
    const clock = manualClock();
    const notify = await createNotify(testOptions(h.url, { mailer: `smtp://127.0.0.1:${await closedPort()}`, clock }));
    try {
      for (const email of ['x@example.com', 'y@example.com']) await notify.contacts.upsert({ email, lists: ['refused'] });
      const c = await notify.campaigns.create({ subject: 'Down', text: 'hi', list: 'refused' });
      const r = await notify.campaigns.send(c.id);
      assert.deepEqual([r.sent, r.failed, r.deferred, r.waiting, r.status], [0, 0, 2, 2, 'sending']);
      const rows = await notify.context.store.db.selectFrom('notify_sends').select(['status', 'error', 'next_attempt_at']).where('campaign_id', '=', c.id).execute();
      assert.deepEqual(
        rows.map((x) => [x.status, Number(x.next_attempt_at)]),
        [
          ['deferred', clock.now() + minutes(1)],
          ['deferred', clock.now() + minutes(1)],
        ],
      );
      assert.match(rows[0].error ?? '', /ECONNREFUSED/);
      assert.deepEqual(await notify.campaigns.getCampaignStats(c.id), { total: 2, sent: 0, failed: 0, opened: 0, clicked: 0 });
    } finally {
      await notify.close();
    }
  });
});

describe('the backoff and its options', () => {
  const cfg = { maxRetries: 5, retryBackoffMinutes: [1, 5, 15] };
  test('1, 5, 15 minutes, then the last delay repeats; the last allowed attempt fails', () => {
    assert.deepEqual([1, 2, 3, 4, 9].map((a) => retryDelay(a, cfg.retryBackoffMinutes) / 60_000), [1, 5, 15, 15, 15]);
    const transient = { id: 1, status: 'failed' as const, error: '421 busy', transient: true };
    assert.deepEqual(settleOutcome(transient, 2, cfg, 1000), { ...transient, status: 'deferred', next_attempt_at: 1000 + minutes(5) });
    assert.equal(settleOutcome(transient, 5, cfg, 1000).status, 'failed');
    const permanent = { id: 1, status: 'failed' as const, error: '550 no', transient: false };
    assert.equal(settleOutcome(permanent, 1, cfg, 1000), permanent);
  });

  test('a drip step: transient on the backoff, SMTP 5xx failed at once, an unrecognised failure after retryDelayMinutes', () => {
    const step = { ...cfg, retryDelayMinutes: 30 };
    const transient = { id: 1, status: 'failed' as const, error: '421 busy', transient: true, final: false };
    assert.deepEqual(settleStepOutcome(transient, 1, step, 1000), { ...transient, status: 'deferred', next_attempt_at: 1000 + minutes(1) });
    const final = { id: 1, status: 'failed' as const, error: '550 no', transient: false, final: true };
    assert.equal(settleStepOutcome(final, 1, step, 1000), final);
    const unknown = { id: 1, status: 'failed' as const, error: 'mailer returned false', transient: false, final: false };
    assert.deepEqual(settleStepOutcome(unknown, 1, step, 1000), { ...unknown, status: 'deferred', next_attempt_at: 1000 + minutes(30) });
    assert.deepEqual(settleStepOutcome(unknown, 5, step, 1000), { ...unknown, error: 'mailer returned false (attempt 5 of 5; no more retries)' });
    const sent = { id: 1, status: 'sent' as const };
    assert.equal(settleStepOutcome(sent, 5, step, 1000), sent);
  });

  test('retryBackoffMinutes from text: "0.5, 2" works; bad values are CONFIG_INVALID naming the option', async () => {
    const load = (v: Record<string, unknown>) => loadConfig(v, { configFile: false, envFile: false, env: {} });
    assert.deepEqual((await load({ retryBackoffMinutes: '0.5, 2' })).retryBackoffMinutes, [0.5, 2]);
    assert.deepEqual((await load({})).retryBackoffMinutes, [1, 5, 15, 60, 240]);
    for (const bad of ['1,x', '0', '-1', '', '1,,5', 'soon']) {
      await assert.rejects(load({ retryBackoffMinutes: bad }), (err) => isNotifyError(err) && err.code === 'CONFIG_INVALID' && /retryBackoffMinutes/.test(err.message), bad);
    }
  });

  test('maxRetries -1 or "many" is CONFIG_INVALID with the reason', async () => {
    const load = (v: Record<string, unknown>) => loadConfig(v, { configFile: false, envFile: false, env: {} });
    await assert.rejects(load({ maxRetries: -1 }), (err) => isNotifyError(err) && err.code === 'CONFIG_INVALID' && /'maxRetries'.*must be at least 1 \(got -1\)/.test(err.message));
    await assert.rejects(load({ maxRetries: 'many' }), (err) => isNotifyError(err) && err.code === 'CONFIG_INVALID' && /'maxRetries'.*must be a number \(got "many"\)/.test(err.message));
    await assert.rejects(load({ maxRetries: '2.5' }), (err) => isNotifyError(err) && /'maxRetries'.*whole number/.test(err.message));
  });
});
