import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runDrips } from '../../src/core/drip-run.ts';
import { ENGINES } from '../helpers/engines.ts';
import { dripWorld } from './helpers.ts';

/**
 * Steps delivered together are recorded together: a group in which one step failed for good takes
 * the path that writes notify_enrollment_failed, and only the enrollment that failed gets one.
 */
for (const engine of ENGINES) {
  describe(`a step failed for good beside steps delivered in the same group [${engine}]`, () => {
    test('notify_enrollment_failed fires for that enrollment alone; the others move on', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const failed: { id: number; status: string }[] = [];
      w.notify.on('notify_enrollment_failed', (p) => {
        failed.push({ id: p.enrollment.id, status: p.enrollment.status });
      });
      await w.notify.drips.createSequence({
        name: 'two',
        steps: [
          { delayMinutes: 0, subject: 'One', text: 'one' },
          { delayMinutes: 60, subject: 'Two', text: 'two' },
        ],
      });
      const ids = new Map<string, number>();
      for (const email of ['ann@example.com', 'bob@example.com', 'cid@example.com']) {
        await w.notify.contacts.upsert({ email });
        ids.set(email, (await w.notify.drips.enroll({ contact: email, sequence: 'two' })).id);
      }
      const send = w.mailer.send;
      w.mailer.send = async (message) => {
        if (message.to[0] === 'bob@example.com') throw Object.assign(new Error('550 5.1.1 No such user'), { responseCode: 550 });
        return send(message);
      };

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed }, { claimed: 3, sent: 2, failed: 1 });
      assert.deepEqual(failed, [{ id: ids.get('bob@example.com')!, status: 'failed' }]);
      const states = [];
      for (const [email, id] of ids) states.push([email, (await w.notify.drips.getEnrollment(id))?.status]);
      assert.deepEqual(states, [
        ['ann@example.com', 'active'],
        ['bob@example.com', 'failed'],
        ['cid@example.com', 'active'],
      ]);
    });
  });
}
