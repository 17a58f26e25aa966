import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newToken } from '../../src/core/tokens.ts';
import { forEachEngine, useStore } from '../helpers/engines.ts';

/**
 * The store contract for the writes that move send rows between states outside a group commit:
 * EnrollmentsRepo.startSteps (a step handed to the mailer), EnrollmentsRepo.interruptStaleSteps (a
 * crashed run's steps in doubt) and SendsRepo.suppressWaiting (a suppressed contact's campaign
 * sends waiting for a retry). Each engine must give the same rows.
 */
const now = Date.UTC(2026, 0, 1);
const STEP = { delay_minutes: 0, subject: 'S', html: 'x', markdown: null, markdown_file: null, text: null, layout: null };

forEachEngine('store contract: send row states', (h) => {
  const store = useStore(h);
  let n = 0;

  const person = (name: string) => store().contacts.upsert({ email: `${name}-${n++}@example.com`, email_key: `${name}-${n}@example.com`, unsubscribe_token: newToken(), initialStatus: 'subscribed' }, now);
  const campaign = async () => Number((await store().db.insertInto('notify_campaigns').values({ subject: 'C', status: 'sending', created_at: now }).returning('id').executeTakeFirstOrThrow()).id);
  async function row(fields: { status: string; contact_id: number; campaign_id?: number; enrollment_id?: number; step_index?: number; updated_at?: number; next_attempt_at?: number; error?: string }) {
    const values = { token: newToken(), to_email: 'x@example.com', subject: 'S', created_at: now, updated_at: now, ...fields };
    return Number((await store().db.insertInto('notify_sends').values(values).returning('id').executeTakeFirstOrThrow()).id);
  }
  const rowOf = (id: number) => store().db.selectFrom('notify_sends').select(['status', 'attempts', 'error', 'next_attempt_at', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
  /** an enrollment of a fresh contact, claimed under `token` when one is given (else due only tomorrow, so no later claim takes it) */
  async function enrollment(token?: string) {
    const seq = await store().sequences.create(`seq-${n++}`, [STEP, STEP], now);
    const c = await person('e');
    const e = await store().enrollments.create({ sequence_id: seq.id, contact_id: c.id, next_send_at: token ? now : now + 86_400_000 }, now);
    if (token) assert.deepEqual((await store().enrollments.claimDue(now, 100, token)).map((x) => x.id), [e.id]);
    return { id: e.id, contact_id: c.id };
  }

  test('startSteps: a queued step starts once, only under the claim its enrollment holds', async () => {
    const a = await enrollment('claim-a');
    const b = await enrollment('claim-b');
    const idle = await enrollment();
    const ra = await row({ status: 'queued', contact_id: a.contact_id, enrollment_id: a.id, step_index: 0 });
    const rb = await row({ status: 'queued', contact_id: b.contact_id, enrollment_id: b.id, step_index: 0 });
    const rIdle = await row({ status: 'queued', contact_id: idle.contact_id, enrollment_id: idle.id, step_index: 0 });
    assert.deepEqual(await store().enrollments.startSteps([], now), new Set());

    const first = await store().enrollments.startSteps(
      [
        { id: ra, claim_token: 'claim-a' },
        { id: rb, claim_token: 'claim-a' },
        { id: rIdle, claim_token: 'claim-a' },
      ],
      now + 1,
    );
    assert.deepEqual(first, new Set([ra]), "another enrollment's claim and an unclaimed enrollment start nothing");
    assert.deepEqual(await rowOf(ra), { status: 'sending', attempts: 1, error: null, next_attempt_at: null, updated_at: now + 1 });
    assert.equal((await rowOf(rb)).status, 'queued');
    assert.equal((await rowOf(rIdle)).status, 'queued');

    const second = await store().enrollments.startSteps(
      [
        { id: ra, claim_token: 'claim-a' },
        { id: rb, claim_token: 'claim-b' },
      ],
      now + 2,
    );
    assert.deepEqual(second, new Set([rb]), 'a row already sending is not started again');
    assert.equal((await rowOf(ra)).attempts, 1);

    // the contact suppressed meanwhile: the enrollment is cancelled, its next step does not start
    const rb2 = await row({ status: 'queued', contact_id: b.contact_id, enrollment_id: b.id, step_index: 1 });
    await store().enrollments.cancelForContact(b.contact_id, now + 3);
    assert.deepEqual(await store().enrollments.startSteps([{ id: rb2, claim_token: 'claim-b' }], now + 4), new Set());
    assert.equal((await rowOf(rb2)).status, 'queued');
  });

  test('interruptStaleSteps: only drip steps sending since before the cut become failed/interrupted, once', async () => {
    const e = await enrollment('claim-i');
    const camp = await campaign();
    const stale = await row({ status: 'sending', contact_id: e.contact_id, enrollment_id: e.id, step_index: 0, updated_at: now - 10_000 });
    const fresh = await row({ status: 'sending', contact_id: e.contact_id, enrollment_id: e.id, step_index: 1, updated_at: now });
    const campaignSend = await row({ status: 'sending', contact_id: e.contact_id, campaign_id: camp, updated_at: now - 10_000 });
    const other = await enrollment();
    const queued = await row({ status: 'queued', contact_id: other.contact_id, enrollment_id: other.id, step_index: 0, updated_at: now - 10_000 });

    const cut = now - 5_000;
    assert.deepEqual(await store().enrollments.interruptStaleSteps(cut, now + 1), [{ id: stale, enrollment_id: e.id, step_index: 0 }]);
    assert.deepEqual(await rowOf(stale), { status: 'failed', attempts: 0, error: 'interrupted', next_attempt_at: null, updated_at: now + 1 });
    assert.equal((await rowOf(fresh)).status, 'sending', 'in flight since after the cut: a live run may still record it');
    assert.equal((await rowOf(campaignSend)).status, 'sending', "a campaign's rows are failStale's, not this");
    assert.equal((await rowOf(queued)).status, 'queued', 'never handed over: not in doubt');
    assert.deepEqual(await store().enrollments.interruptStaleSteps(cut, now + 2), [], 'a second call finds nothing');
  });

  test("suppressWaiting: the contact's deferred campaign sends become suppressed, counted per campaign; nothing else moves", async () => {
    const who = await person('w');
    const bystander = await person('b');
    const [c1, c2, c3, c4] = [await campaign(), await campaign(), await campaign(), await campaign()];
    const e = await enrollment();
    const d1 = await row({ status: 'deferred', contact_id: who.id, campaign_id: c1, next_attempt_at: now + 60_000, error: '421 try later' });
    const d2 = await row({ status: 'deferred', contact_id: who.id, campaign_id: c2, next_attempt_at: now + 300_000, error: '421 try later' });
    const q3 = await row({ status: 'queued', contact_id: who.id, campaign_id: c3 });
    const s4 = await row({ status: 'sent', contact_id: who.id, campaign_id: c4 });
    const theirs = await row({ status: 'deferred', contact_id: bystander.id, campaign_id: c1, next_attempt_at: now + 60_000 });
    const step = await row({ status: 'deferred', contact_id: e.contact_id, enrollment_id: e.id, step_index: 0, next_attempt_at: now + 60_000 });

    assert.deepEqual(
      await store().sends.suppressWaiting(who.id, now + 1),
      new Map([
        [c1, 1],
        [c2, 1],
      ]),
    );
    for (const id of [d1, d2]) assert.deepEqual(await rowOf(id), { status: 'suppressed', attempts: 0, error: null, next_attempt_at: null, updated_at: now + 1 });
    assert.equal((await rowOf(q3)).status, 'queued', 'a queued row is left to the run holding it');
    assert.equal((await rowOf(s4)).status, 'sent');
    assert.equal((await rowOf(theirs)).status, 'deferred', "another contact's row");
    assert.equal((await rowOf(step)).status, 'deferred', 'a drip step of another contact');
    assert.deepEqual(await store().sends.suppressWaiting(who.id, now + 2), new Map(), 'a second call changes nothing');
    assert.deepEqual(await store().sends.suppressWaiting(999_999, now + 2), new Map(), 'an unknown contact: nothing');
  });
});
