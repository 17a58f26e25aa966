import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runDrips } from '../../src/core/drip-run.ts';
import type { Mailer } from '../../src/mail/contract.ts';
import { ENGINES } from '../helpers/engines.ts';
import { dripWorld } from './helpers.ts';

// A worker told to stop (its AbortSignal) while a drip run is delivering: the chunk in hand is
// delivered and recorded, and no further enrollment is claimed; the next run picks those up.
for (const engine of ENGINES) {
  describe(`a drip run whose signal aborts [${engine}]`, () => {
    test('the claimed chunk is delivered and recorded; nothing more is claimed until the next run', async (t) => {
      const stop = new AbortController();
      const delivered: string[] = [];
      const mailer: Mailer = {
        name: 'stopping',
        async send(message) {
          delivered.push(message.to[0]);
          stop.abort();
          return { messageId: `<${message.sendToken}@test>` };
        },
      };
      const w = await dripWorld(engine, { mailer });
      t.after(() => w.close());
      await w.notify.drips.createSequence({ name: 'one', steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] });
      const enrolments = [];
      for (const email of ['ann@example.com', 'bob@example.com', 'cy@example.com']) {
        await w.notify.contacts.upsert({ email });
        enrolments.push(await w.notify.drips.enroll({ contact: email, sequence: 'one' }));
      }

      const r = await runDrips(w.notify.context, { signal: stop.signal, chunkSize: 1 });
      assert.deepEqual({ claimed: r.claimed, sent: r.sent }, { claimed: 1, sent: 1 });
      assert.equal(delivered.length, 1);
      const statuses = await Promise.all(enrolments.map(async (e) => (await w.notify.drips.getEnrollment(e.id))?.status));
      assert.deepEqual(statuses.sort(), ['active', 'active', 'completed'], 'the delivered one completed, the others untouched');

      const next = await runDrips(w.notify.context, { chunkSize: 1 });
      assert.deepEqual({ claimed: next.claimed, sent: next.sent }, { claimed: 2, sent: 2 });
      assert.deepEqual([...delivered].sort(), ['ann@example.com', 'bob@example.com', 'cy@example.com']);
    });
  });
}
