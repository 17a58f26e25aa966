import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runDrips } from '../../src/core/drip-run.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

const THROTTLE = 40;
/** more recipients than one chunk, so a run crosses chunk boundaries */
const CHUNK = 2;
const PEOPLE = 9;

/** Gaps between consecutive arrivals at the sink, in ms, for the messages after `from`. */
function gaps(sink: SmtpSink, from: number): number[] {
  const at = sink.messages.slice(from).map((m) => m.at);
  return at.slice(1).map((t, i) => t - at[i]);
}

forEachEngine('throttleMs between every two sends of a run', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink({ parse: false });
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, throttleMs: THROTTLE, batchSize: 200 }));
    for (let i = 0; i < PEOPLE; i++) await notify.contacts.upsert({ email: `p${i}@example.com`, lists: ['paced'] });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test(`a campaign over ${PEOPLE} people in chunks of ${CHUNK}: no two deliveries closer than ${THROTTLE} ms at the SMTP server`, async () => {
    const from = sink.messages.length;
    const c = await notify.campaigns.create({ subject: 'Paced', html: '<p>Hi</p>', list: 'paced' });
    const run = await notify.campaigns.send(c.id, { chunkSize: CHUNK });
    assert.equal(run.sent, PEOPLE);
    await sink.waitFor(from + PEOPLE);
    const spacing = gaps(sink, from);
    assert.equal(spacing.length, PEOPLE - 1);
    assert.ok(Math.min(...spacing) >= THROTTLE - 1, `gaps between deliveries: ${spacing.map((g) => g.toFixed(1)).join(', ')} ms`);
  });

  test(`drip steps of ${PEOPLE} enrollments in chunks of ${CHUNK}: no two deliveries closer than ${THROTTLE} ms at the SMTP server`, async () => {
    const from = sink.messages.length;
    await notify.drips.createSequence({ name: 'paced', steps: [{ delayMinutes: 0, subject: 'Welcome', html: '<p>Hi</p>' }] });
    for (let i = 0; i < PEOPLE; i++) await notify.drips.enroll({ contact: `p${i}@example.com`, sequence: 'paced' });
    const run = await runDrips(notify.context, { chunkSize: CHUNK });
    assert.equal(run.sent, PEOPLE);
    await sink.waitFor(from + PEOPLE);
    const spacing = gaps(sink, from);
    assert.ok(Math.min(...spacing) >= THROTTLE - 1, `gaps between deliveries: ${spacing.map((g) => g.toFixed(1)).join(', ')} ms`);
  });
});
