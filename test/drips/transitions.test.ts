import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minutes } from '../../src/core/clock.ts';
import { runDrips } from '../../src/core/drip-run.ts';
import { suppressContact } from '../../src/core/suppression.ts';
import type { Enrollment } from '../../src/core/types.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify } from '../../src/notify.ts';
import { newToken, sendUnsubscribeToken } from '../../src/core/tokens.ts';
import { ENGINES } from '../helpers/engines.ts';
import { type DripWorld, dripWorld } from './helpers.ts';

const TWO_STEPS = [
  { delayMinutes: 10, subject: 'Welcome {{ contact.name }}', html: '<p>Hi {{ contact.name }}, <a href="https://example.com/start">start</a></p>' },
  { delayMinutes: 60, subject: 'Day two', markdown: '# Two\n\n[More](https://example.com/more)' },
];

for (const engine of ENGINES) {
  describe(`drip transitions [${engine}]`, () => {
    /** a world for one test, closed when it ends */
    const world = async (t: { after(fn: () => Promise<void>): void }, extra = {}) => {
      const w = await dripWorld(engine, extra);
      t.after(() => w.close());
      return w;
    };
    const enrolled = async (w: DripWorld, email = 'ann@example.com', steps = TWO_STEPS, status?: 'pending') => {
      await w.notify.contacts.upsert({ email, name: 'Ann', ...(status ? { status } : {}) });
      const name = `seq-${newToken()}`;
      await w.notify.drips.createSequence({ name, steps });
      return w.notify.drips.enroll({ contact: email, sequence: name });
    };
    const get = async (w: DripWorld, e: Enrollment) => (await w.notify.drips.getEnrollment(e.id))!;
    /** what a run that crashed after writing the first step's send row leaves: the claim and the row, `sending` */
    const claimFirstStep = async (w: DripWorld, e: Enrollment) => {
      const store = w.notify.context.store;
      w.clock.advance(minutes(10));
      const [claimed] = await store.enrollments.claimDue(w.clock.now(), 10, newToken());
      const seq = (await w.notify.drips.getSequence(claimed.sequence_id))!;
      const [row] = await store.sends.claimSteps([{ token: newToken(), enrollment_id: e.id, step_id: seq.steps[0].id, step_index: 0, contact_id: e.contact_id, to_email: 'ann@example.com', subject: 'x', status: 'sending' }], w.clock.now());
      return row;
    };
    const rows = (w: DripWorld, enrollmentId: number) => w.notify.context.store.db.selectFrom('notify_sends').selectAll().where('enrollment_id', '=', enrollmentId).orderBy('step_index').execute();

    test('not due, then due: one message through the campaign pipeline, the send row keyed by enrollment and step, the next step scheduled from now', async (t) => {
      const w = await world(t);
      const e = await enrolled(w);
      assert.deepEqual({ status: e.status, step_index: e.step_index, attempts: e.attempts }, { status: 'active', step_index: 0, attempts: 0 });
      assert.equal(e.next_send_at?.getTime(), w.clock.now() + minutes(10), 'the first step is due its delay after enrollment');

      assert.deepEqual(await w.notify.drips.process(), { sent: 0, failed: 0, retried: 0, reclaimed: 0 }, 'not due yet');
      w.clock.advance(minutes(10));
      assert.deepEqual(await w.notify.drips.process(), { sent: 1, failed: 0, retried: 0, reclaimed: 0 });
      assert.equal(w.mailer.messages.length, 1);
      const m = w.mailer.messages[0];
      assert.equal(m.subject, 'Welcome Ann');
      assert.deepEqual(m.to, ['ann@example.com']);
      const [send] = await rows(w, e.id);
      assert.equal(m.headers['List-Unsubscribe'], `<http://localhost:3000/notify/u/${sendUnsubscribeToken(w.notify.context.secret, Number(send.id))}>`);
      assert.equal(m.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
      const raw = m.html!;
      assert.match(raw, new RegExp(`<img src="http://localhost:3000/notify/open/${m.sendToken}" width="1" height="1" alt="">`), 'tracking pixel');
      assert.match(raw, new RegExp(`/notify/click/${m.sendToken}\\?l=s\\d+\\.0\\.`), 'links rewritten under the step scope');
      assert.doesNotMatch(raw, /href="https:\/\/example\.com\/start"/);

      const [row] = await rows(w, e.id);
      assert.deepEqual({ status: row.status, step_index: Number(row.step_index), token: row.token, campaign_id: row.campaign_id }, { status: 'sent', step_index: 0, token: m.sendToken, campaign_id: null });
      const after = await get(w, e);
      assert.deepEqual({ status: after.status, step_index: after.step_index, attempts: after.attempts }, { status: 'active', step_index: 1, attempts: 0 });
      assert.equal(after.next_send_at?.getTime(), w.clock.now() + minutes(60));

      // the click endpoint resolves the step's link
      const href = /href="(http:\/\/localhost:3000\/notify\/click\/[^"]+)"/.exec(raw)![1].replace(/&amp;/g, '&').replace('http://localhost:3000', 'http://x');
      const click = await w.notify.fetch(new Request(href, { redirect: 'manual' }));
      assert.equal(click.status, 302);
      assert.equal(click.headers.get('location'), 'https://example.com/start');
    });

    test('completion: the last step sent makes the enrollment completed; nothing more is sent', async (t) => {
      const w = await world(t);
      const e = await enrolled(w);
      w.clock.advance(minutes(10));
      await w.notify.drips.process();
      w.clock.advance(minutes(59));
      assert.equal((await w.notify.drips.process()).sent, 0, 'step 2 is not due one minute early');
      w.clock.advance(minutes(1));
      assert.equal((await w.notify.drips.process()).sent, 1);
      const done = await get(w, e);
      assert.deepEqual({ status: done.status, step_index: done.step_index, next_send_at: done.next_send_at }, { status: 'completed', step_index: 2, next_send_at: null });
      w.clock.advance(minutes(10_000));
      assert.equal((await w.notify.drips.process()).sent, 0);
      assert.deepEqual(
        w.mailer.messages.map((m) => m.subject),
        ['Welcome Ann', 'Day two'],
      );
      assert.deepEqual(
        (await rows(w, e.id)).map((r) => [Number(r.step_index), r.status]),
        [
          [0, 'sent'],
          [1, 'sent'],
        ],
      );
    });

    test("a failure's text is kept as the mailer gave it, on the step's row and its enrollment (quotes, backslash, newline, non-ASCII, ?)", async (t) => {
      const w = await world(t);
      const e = await enrolled(w);
      w.clock.advance(minutes(10));
      const reply = `421 l'été "busy" \\ $1 ? ; drop\nnext line ✓`;
      w.mailer.send = async () => {
        throw new Error(reply);
      };
      assert.equal((await w.notify.drips.process()).retried, 1);
      const now = await get(w, e);
      assert.equal(now.status, 'active');
      assert.match(now.last_error ?? '', /drop\nnext line ✓$/);
      assert.ok(now.last_error?.includes(reply), now.last_error ?? '');
      const [row] = await rows(w, e.id);
      assert.equal(row.error, now.last_error);
      assert.equal(Number(row.attempts), 1);
    });

    test('retry timing and failure after exactly maxRetries attempts: notify_enrollment_failed fires once', async (t) => {
      const w = await world(t);
      const events: unknown[] = [];
      w.notify.on('notify_enrollment_failed', (p) => {
        events.push(p);
      });
      const e = await enrolled(w);
      w.clock.advance(minutes(10));
      w.mailer.fail = 'false';
      assert.deepEqual(await w.notify.drips.process(), { sent: 0, failed: 0, retried: 1, reclaimed: 0 });
      let now = await get(w, e);
      assert.deepEqual({ status: now.status, attempts: now.attempts, step_index: now.step_index, last_error: now.last_error }, { status: 'active', attempts: 1, step_index: 0, last_error: 'mailer returned false' });
      assert.equal(now.next_send_at?.getTime(), w.clock.now() + minutes(5), 'next_send_at moved forward by retryDelayMinutes');

      w.clock.advance(minutes(4));
      assert.deepEqual(await w.notify.drips.process(), { sent: 0, failed: 0, retried: 0, reclaimed: 0 }, 'not before retryDelayMinutes');
      w.clock.advance(minutes(1));
      w.mailer.fail = 'throw';
      assert.deepEqual(await w.notify.drips.process(), { sent: 0, failed: 0, retried: 1, reclaimed: 0 }, 'a throwing mailer is a failed attempt too');
      now = await get(w, e);
      assert.equal(now.attempts, 2);
      assert.match(now.last_error ?? '', /smtp connection refused/);

      w.clock.advance(minutes(5));
      assert.deepEqual(await w.notify.drips.process(), { sent: 0, failed: 1, retried: 0, reclaimed: 0 }, 'the third attempt is the last');
      now = await get(w, e);
      assert.deepEqual({ status: now.status, attempts: now.attempts, next_send_at: now.next_send_at }, { status: 'failed', attempts: 3, next_send_at: null });
      w.clock.advance(minutes(60));
      w.mailer.fail = null;
      assert.deepEqual(await w.notify.drips.process(), { sent: 0, failed: 0, retried: 0, reclaimed: 0 });
      assert.equal(events.length, 1, 'fired exactly once');
      const payload = events[0] as { enrollment: Enrollment; error: string };
      assert.equal(payload.enrollment.id, e.id);
      assert.equal(payload.enrollment.status, 'failed');
      assert.match(payload.error, /smtp connection refused/);
      assert.equal(w.mailer.messages.length, 0);
      const r = await rows(w, e.id);
      assert.deepEqual(
        r.map((x) => x.status),
        ['failed'],
        'one send row for the step, reused by every attempt',
      );
    });

    test('a retry that succeeds resets the attempts and advances', async (t) => {
      const w = await world(t);
      const e = await enrolled(w);
      w.clock.advance(minutes(10));
      w.mailer.fail = 'false';
      await w.notify.drips.process();
      w.mailer.fail = null;
      w.clock.advance(minutes(5));
      assert.equal((await w.notify.drips.process()).sent, 1);
      const now = await get(w, e);
      assert.deepEqual({ status: now.status, attempts: now.attempts, step_index: now.step_index, last_error: now.last_error }, { status: 'active', attempts: 0, step_index: 1, last_error: null });
      assert.deepEqual(
        (await rows(w, e.id)).map((r) => r.status),
        ['sent'],
      );
    });

    test('stale claim reclaimed and sent; a fresh claim is left alone', async (t) => {
      const w = await world(t);
      const e = await enrolled(w);
      w.clock.advance(minutes(10));
      // a run claims it and dies before doing anything else
      const [claimed] = await w.notify.context.store.enrollments.claimDue(w.clock.now(), 10, newToken());
      assert.equal(claimed.id, e.id);
      assert.equal((await get(w, e)).status, 'processing');
      w.clock.advance(minutes(29));
      assert.deepEqual(await w.notify.drips.process(), { sent: 0, failed: 0, retried: 0, reclaimed: 0 }, 'a claim younger than staleLockMinutes is not touched');
      assert.equal((await get(w, e)).status, 'processing');
      w.clock.advance(minutes(2));
      assert.deepEqual(await w.notify.drips.process(), { sent: 1, failed: 0, retried: 0, reclaimed: 1 });
      assert.equal((await get(w, e)).step_index, 1);
      assert.equal(w.mailer.messages.length, 1);
    });

    test('crash after the send row was written but before delivery: failed/interrupted, not resent, the sequence continues', async (t) => {
      const w = await world(t);
      const e = await enrolled(w);
      await claimFirstStep(w, e);
      w.clock.advance(minutes(31));
      const r = await runDrips(w.notify.context);
      assert.deepEqual({ sent: r.sent, reclaimed: r.reclaimed, interrupted: r.interrupted }, { sent: 0, reclaimed: 1, interrupted: 1 });
      assert.equal(w.mailer.messages.length, 0, 'at most once: the provider may have taken it');
      const [row] = await rows(w, e.id);
      assert.deepEqual({ status: row.status, error: row.error }, { status: 'failed', error: 'interrupted' });
      const now = await get(w, e);
      assert.deepEqual({ status: now.status, step_index: now.step_index }, { status: 'active', step_index: 1 });
    });

    test('crash after delivery but before the enrollment moved: the reclaimed step only advances', async (t) => {
      const w = await world(t);
      const e = await enrolled(w);
      const row = await claimFirstStep(w, e);
      const store = w.notify.context.store;
      await store.sends.finish([{ id: row.id, status: 'sent', message_id: '<m@x>' }], w.clock.now());
      w.clock.advance(minutes(31));
      const r = await runDrips(w.notify.context);
      assert.deepEqual({ sent: r.sent, reclaimed: r.reclaimed, advanced: r.advanced }, { sent: 0, reclaimed: 1, advanced: 1 });
      assert.equal(w.mailer.messages.length, 0);
      assert.equal((await get(w, e)).step_index, 1);
    });

    test('a completion under a claim that was reclaimed changes nothing', async (t) => {
      const w = await world(t);
      const e = await enrolled(w);
      const store = w.notify.context.store;
      w.clock.advance(minutes(10));
      const oldToken = newToken();
      await store.enrollments.claimDue(w.clock.now(), 10, oldToken);
      w.clock.advance(minutes(31));
      assert.equal((await w.notify.drips.process()).sent, 1, 'another run reclaims and sends');
      const before = await get(w, e);
      const changed = await store.enrollments.settle(oldToken, [{ id: e.id, status: 'completed', step_index: 2, next_send_at: null, attempts: 0, last_error: null }], w.clock.now());
      assert.equal(changed.size, 0);
      assert.deepEqual(await get(w, e), before);
    });

    test('unsubscribe, bounce and complaint cancel active and processing enrollments; nothing is sent after', async (t) => {
      const w = await world(t);
      const a = await enrolled(w, 'a@example.com');
      const b = await enrolled(w, 'b@example.com');
      const c = await enrolled(w, 'c@example.com');
      const contactA = (await w.notify.contacts.get('a@example.com'))!;
      const res = await w.notify.fetch(new Request(`http://x/notify/unsubscribe/${contactA.unsubscribe_token}`));
      assert.equal(res.status, 200);
      w.clock.advance(minutes(10));
      await w.notify.context.store.enrollments.claimDue(w.clock.now(), 1, newToken());
      await suppressContact(w.notify.context, (await w.notify.contacts.get('b@example.com'))!, 'bounced', { provider: 'test' });
      await suppressContact(w.notify.context, (await w.notify.contacts.get('c@example.com'))!, 'complained', { provider: 'test' });
      for (const e of [a, b, c]) assert.equal((await get(w, e)).status, 'cancelled', `enrollment ${e.id}`);
      w.clock.advance(minutes(60));
      assert.deepEqual(await w.notify.drips.process(), { sent: 0, failed: 0, retried: 0, reclaimed: 0 });
      assert.equal(w.mailer.messages.length, 0);
    });

    test('suppressed contacts are refused at enroll (SUPPRESSED)', async (t) => {
      const w = await world(t);
      const seq = await w.notify.drips.createSequence({ name: 'refuse', steps: TWO_STEPS });
      for (const status of ['unsubscribed', 'bounced', 'complained'] as const) {
        await w.notify.contacts.upsert({ email: `${status}@example.com`, status });
        await assert.rejects(w.notify.drips.enroll({ contact: `${status}@example.com`, sequence: seq.id }), (err) => isNotifyError(err, 'SUPPRESSED') && new RegExp(status).test(err.message));
      }
    });

    test('the last check before sending: a contact unsubscribed, bounced or complained after enrolling, its enrollment left active, is cancelled with nothing sent and no send row', async (t) => {
      const w = await world(t);
      const store = w.notify.context.store;
      const statuses = ['unsubscribed', 'bounced', 'complained'] as const;
      const live = await enrolled(w, 'live@example.com');
      const gone = [];
      for (const status of statuses) {
        const e = await enrolled(w, `${status}@example.com`);
        // a status change that bypasses the suppression flow (no cancel), as a direct update or an import would make
        await store.contacts.setStatus(e.contact_id, status, w.clock.now());
        assert.equal((await get(w, e)).status, 'active', `${status}: still active before the run`);
        gone.push(e);
      }
      w.clock.advance(minutes(10));
      const r = await runDrips(w.notify.context);
      assert.deepEqual({ sent: r.sent, cancelled: r.cancelled, failed: r.failed }, { sent: 1, cancelled: 3, failed: 0 });
      assert.deepEqual(
        w.mailer.messages.map((m) => m.to),
        [['live@example.com']],
        'only the subscribed contact is mailed',
      );
      for (const [i, e] of gone.entries()) {
        const after = await get(w, e);
        assert.deepEqual({ status: after.status, next_send_at: after.next_send_at }, { status: 'cancelled', next_send_at: null }, statuses[i]);
        assert.deepEqual(await rows(w, e.id), [], `${statuses[i]}: no send row`);
      }
      assert.equal((await get(w, live)).step_index, 1);
      // later runs never come back to them
      w.clock.advance(minutes(24 * 60));
      assert.equal((await w.notify.drips.process()).sent, 1, 'the live contact gets step two');
      assert.deepEqual(
        w.mailer.messages.map((m) => m.to[0]),
        ['live@example.com', 'live@example.com'],
      );
    });

    test('a contact pending double opt-in waits; once confirmed its due step goes out', async (t) => {
      const w = await world(t);
      const e = await enrolled(w, 'wait@example.com', TWO_STEPS, 'pending');
      w.clock.advance(minutes(10));
      assert.equal((await w.notify.drips.process()).sent, 0);
      assert.equal((await get(w, e)).status, 'active');
      await w.notify.contacts.upsert({ email: 'wait@example.com', status: 'subscribed' });
      assert.equal((await w.notify.drips.process()).sent, 1);
    });

    test('batchSize caps a run; two runs at once send each step once', async (t) => {
      const w = await world(t, { batchSize: 3 });
      const name = 'many';
      await w.notify.drips.createSequence({ name, steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] });
      for (let i = 0; i < 8; i++) {
        await w.notify.contacts.upsert({ email: `m${i}@example.com` });
        await w.notify.drips.enroll({ contact: `m${i}@example.com`, sequence: name });
      }
      assert.equal((await w.notify.drips.process()).sent, 3);
      const other = await createNotify({ ...w.notify.config, mailer: w.mailer, clock: w.clock, configFile: false, env: {}, migrate: false } as never);
      t.after(() => other.close());
      const [x, y] = await Promise.all([w.notify.drips.process(), other.drips.process()]);
      assert.equal(x.sent + y.sent, 5);
      const seen = w.mailer.messages.map((m) => m.to[0]);
      assert.equal(new Set(seen).size, 8, 'all eight once');
      assert.equal(seen.length, 8);
    });

    test('throttleMs sleeps between sends', async (t) => {
      const w = await world(t, { throttleMs: 40 });
      await w.notify.drips.createSequence({ name: 'slow', steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] });
      for (let i = 0; i < 3; i++) {
        await w.notify.contacts.upsert({ email: `t${i}@example.com` });
        await w.notify.drips.enroll({ contact: `t${i}@example.com`, sequence: 'slow' });
      }
      const started = performance.now();
      assert.equal((await w.notify.drips.process()).sent, 3);
      assert.ok(performance.now() - started >= 80, 'two pauses of 40 ms');
    });

    test('bad input: clear codes, nothing stored', async (t) => {
      const w = await world(t);
      const d = w.notify.drips;
      const bad = async (input: unknown, code: string, re: RegExp) =>
        assert.rejects(d.createSequence(input as never), (err) => isNotifyError(err) && err.code === code && re.test(err.message));
      await bad(null, 'INVALID_INPUT', /needs \{ name, steps \}/);
      await bad({ name: '', steps: TWO_STEPS }, 'INVALID_INPUT', /needs a name/);
      await bad({ name: 'x', steps: [] }, 'INVALID_INPUT', /1 to 100 steps/);
      await bad({ name: 'x', steps: 'nope' }, 'INVALID_INPUT', /1 to 100 steps/);
      await bad({ name: 'x', steps: [{ delayMinutes: -1, subject: 's', html: 'h' }] }, 'INVALID_INPUT', /steps\[0\]\.delayMinutes/);
      await bad({ name: 'x', steps: [{ delayMinutes: 1.5, subject: 's', html: 'h' }] }, 'INVALID_INPUT', /delayMinutes/);
      await bad({ name: 'x', steps: [{ delayMinutes: '5', subject: 's', html: 'h' }] }, 'INVALID_INPUT', /delayMinutes/);
      await bad({ name: 'x', steps: [TWO_STEPS[0], { delayMinutes: 1, subject: 's', html: 'h', markdown: 'm' }] }, 'INVALID_INPUT', /steps\[1\]: Give only one/);
      await bad({ name: 'x', steps: [{ delayMinutes: 1, html: 'h' }] }, 'INVALID_INPUT', /subject is required/);
      await bad({ name: 'x', steps: [{ delayMinutes: 1, subject: 'a\r\nBcc: x@evil.com', html: 'h' }] }, 'HEADER_INJECTION', /line break/);
      await bad({ name: 'x', steps: [{ delayMinutes: 1, subject: 's', markdownFile: '../../etc/passwd' }] }, 'PATH_ESCAPE', /outside markdownPath/);
      await bad({ name: 'x', steps: [{ delayMinutes: 1, subject: 's', markdownFile: 'missing.md' }] }, 'NOT_FOUND', /does not exist/);
      await bad({ name: 'x', steps: [{ delayMinutes: 1, subject: 's', html: '{% if %}' }] }, 'TEMPLATE_ERROR', /./);
      await bad({ name: 'x', steps: [{ delayMinutes: 1, subject: 's', html: 'h', layout: 'nope/none' }] }, 'NOT_FOUND', /./);
      assert.equal(await d.getSequence('x'), undefined, 'nothing stored');
      await d.createSequence({ name: 'x', steps: TWO_STEPS });
      await bad({ name: 'x', steps: TWO_STEPS }, 'DUPLICATE', /already exists/);

      await w.notify.contacts.upsert({ email: 'ann@example.com' });
      const e = await d.enroll({ contact: 'ANN@example.com', sequence: 'x' });
      await assert.rejects(d.enroll({ contact: 'ann@example.com', sequence: 'x' }), (err) => isNotifyError(err, 'DUPLICATE'));
      await assert.rejects(d.enroll({ contact: e.contact_id, sequence: e.sequence_id }), (err) => isNotifyError(err, 'DUPLICATE'), 'by ids, the same pair');
      await assert.rejects(d.enroll({ contact: 'nobody@example.com', sequence: 'x' }), (err) => isNotifyError(err, 'NOT_FOUND') && /Contact/.test(err.message));
      await assert.rejects(d.enroll({ contact: 'ann@example.com', sequence: 'nope' }), (err) => isNotifyError(err, 'NOT_FOUND') && /Sequence/.test(err.message));
      await assert.rejects(d.enroll({ contact: 'ann@example.com', sequence: -1 }), (err) => isNotifyError(err, 'NOT_FOUND'));
      await assert.rejects(d.enroll({ contact: { id: 1 }, sequence: 'x' } as never), (err) => isNotifyError(err, 'INVALID_INPUT'));
      await assert.rejects(d.enroll(undefined as never), (err) => isNotifyError(err, 'INVALID_INPUT'));
    });
  });
}
