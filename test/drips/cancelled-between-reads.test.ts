import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minutes } from '../../src/core/clock.ts';
import { runDrips } from '../../src/core/drip-run.ts';
import { ENGINES } from '../helpers/engines.ts';
import { type DripWorld, dripWorld } from './helpers.ts';

/**
 * A step row must never wait for ever behind an enrollment that was cancelled: the suppression flow
 * cancels the rows that exist when it runs, the drip run those it finds or creates afterwards.
 */

const stepRows = (w: DripWorld) =>
  w.notify.context.store.db.selectFrom('notify_sends').select(['to_email', 'status']).where('enrollment_id', 'is not', null).orderBy('to_email').execute();

async function enrol(w: DripWorld, emails: string[]) {
  await w.notify.drips.createSequence({ name: 'one', steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] });
  const ids = [];
  for (const email of emails) {
    await w.notify.contacts.upsert({ email });
    ids.push((await w.notify.drips.enroll({ contact: email, sequence: 'one' })).id);
  }
  return ids;
}

for (const engine of ENGINES) {
  describe(`a drip step whose enrollment is cancelled outside the run [${engine}]`, () => {
    test("unsubscribed after the run read the contacts, before it wrote the step rows: Bob's row is cancelled, not left queued", async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const [ann, bob] = await enrol(w, ['ann@example.com', 'bob@example.com']);
      const sends = w.notify.context.store.sends;
      const claimSteps = sends.claimSteps.bind(sends);
      // the one-click unsubscribe lands in the window between the run's read of the contacts
      // (both subscribed) and its insert of the rows: the flow finds no row of Bob's to cancel yet
      sends.claimSteps = async (rows, now) => {
        const contact = (await w.notify.contacts.get('bob@example.com'))!;
        const res = await w.notify.fetch(new Request(`http://x/notify/unsubscribe/${contact.unsubscribe_token}`, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) }));
        assert.equal(res.status, 200);
        return claimSteps(rows, now);
      };

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed }, { claimed: 2, sent: 1, failed: 0 });
      assert.deepEqual(
        w.mailer.messages.map((m) => m.to[0]),
        ['ann@example.com'],
      );
      assert.deepEqual(
        (await stepRows(w)).map((s) => [s.to_email, s.status]),
        [
          ['ann@example.com', 'sent'],
          ['bob@example.com', 'cancelled'],
        ],
      );
      assert.deepEqual([(await w.notify.drips.getEnrollment(ann))?.status, (await w.notify.drips.getEnrollment(bob))?.status], ['completed', 'cancelled']);
    });

    test("a claim taken back by another run in the same window: that contact's queued row is left for the run that took it", async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const [, bob, cid] = await enrol(w, ['ann@example.com', 'bob@example.com', 'cid@example.com']);
      const { sends, db } = w.notify.context.store;
      const claimSteps = sends.claimSteps.bind(sends);
      sends.claimSteps = async (rows, now) => {
        sends.claimSteps = claimSteps;
        const created = await claimSteps(rows, now);
        // Bob unsubscribes, and Cid's claim goes back to 'active' as a stale claim does, before any step starts
        const contact = (await w.notify.contacts.get('bob@example.com'))!;
        await w.notify.contacts.upsert({ email: contact.email, status: 'unsubscribed' });
        await db.updateTable('notify_enrollments').set({ status: 'active', claim_token: null, locked_at: null }).where('id', '=', cid).execute();
        return created;
      };
      // Cid, due again, is claimed again by this run's last claim, which sends the row it finds
      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent }, { claimed: 4, sent: 2 });
      assert.deepEqual(
        w.mailer.messages.map((m) => m.to[0]),
        ['ann@example.com', 'cid@example.com'],
      );
      assert.deepEqual(
        (await stepRows(w)).map((s) => [s.to_email, s.status]),
        [
          ['ann@example.com', 'sent'],
          ['bob@example.com', 'cancelled'],
          ['cid@example.com', 'sent'],
        ],
      );
      assert.deepEqual([(await w.notify.drips.getEnrollment(bob))?.status, (await w.notify.drips.getEnrollment(cid))?.status], ['cancelled', 'completed']);
    });

    for (const when of ['before the run reads the contacts', 'after the run wrote the step rows'] as const) {
      test(`a contact erased ${when}: the run goes on without them`, async (t) => {
        const w = await dripWorld(engine);
        t.after(() => w.close());
        await enrol(w, ['ann@example.com', 'bob@example.com']);
        const { contacts, sends } = w.notify.context.store;
        const erase = async () => assert.equal(await w.notify.contacts.erase('bob@example.com'), true);
        if (when === 'before the run reads the contacts') {
          const recipients = contacts.recipients.bind(contacts);
          contacts.recipients = async (ids) => {
            await erase();
            return recipients(ids);
          };
        } else {
          const claimSteps = sends.claimSteps.bind(sends);
          sends.claimSteps = async (rows, now) => {
            const created = await claimSteps(rows, now);
            await erase();
            return created;
          };
        }
        const r = await runDrips(w.notify.context);
        assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed }, { claimed: 2, sent: 1, failed: 0 });
        assert.deepEqual(
          w.mailer.messages.map((m) => m.to[0]),
          ['ann@example.com'],
        );
        assert.equal(await w.notify.contacts.get('bob@example.com'), undefined);
      });
    }

    test('a status written straight to the database (no suppression flow) while a step waits deferred: the run cancels the enrollment and the row', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const [ann] = await enrol(w, ['ann@example.com']);
      const send = w.mailer.send;
      w.mailer.send = async () => {
        throw Object.assign(new Error('421 4.7.0 Try again later'), { responseCode: 421 });
      };
      assert.equal((await runDrips(w.notify.context)).retried, 1);
      assert.deepEqual((await stepRows(w)).map((s) => s.status), ['deferred']);
      w.mailer.send = send;
      const store = w.notify.context.store;
      await store.db.updateTable('notify_contacts').set({ status: 'bounced' }).where('email_key', '=', 'ann@example.com').execute();
      w.clock.advance(minutes(5));

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, cancelled: r.cancelled }, { claimed: 1, sent: 0, cancelled: 1 });
      assert.equal(w.mailer.messages.length, 0);
      assert.equal((await w.notify.drips.getEnrollment(ann))?.status, 'cancelled');
      assert.deepEqual((await stepRows(w)).map((s) => s.status), ['cancelled'], 'the deferred row ends with its enrollment');
    });
  });
}
