import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { createStatsService, pickBucket } from '../../src/core/stats.ts';
import { contactTimeline } from '../../src/core/timeline.ts';
import { isNotifyError } from '../../src/errors.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';

/**
 * Campaign figures and a person's timeline as the library hands them out: ids given as text, the
 * refusals' messages and fields, the report's bucket bounds, sent and unsent campaigns in the list,
 * and the timeline's order and limit. test/stats/stats.test.ts and test/admin/timeline.test.ts read
 * the common cases.
 */
const T0 = Date.UTC(2026, 3, 1, 9, 0);
const DAY = 86_400_000;
const HUMAN = { headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36' } };

/** the NotifyError a call rejects with: code, message, details */
async function refusal(p: Promise<unknown>): Promise<[string, string, unknown]> {
  try {
    await p;
  } catch (e) {
    assert.ok(isNotifyError(e), String(e));
    return [e.code, e.message, e.details];
  }
  return assert.fail('expected a refusal');
}

test('pickBucket: each readable bucket size, as the report names it in milliseconds', () => {
  const m = 60_000;
  const h = 60 * m;
  for (const b of [m, 5 * m, 15 * m, h, 3 * h, 6 * h, 12 * h, DAY, 7 * DAY, 30 * DAY]) assert.equal(pickBucket(47 * b), b, String(b));
  assert.equal(pickBucket(48 * 30 * DAY), 30 * DAY, 'the largest when nothing fits');
});

forEachEngine('campaign figures through the library', (h) => {
  const clock = manualClock(T0);
  const notify = useNotify(h, { clock });

  test('a campaign id given as text, with spaces or several digits, names the campaign', async () => {
    const ids: number[] = [];
    while (ids.length < 12) ids.push((await notify().campaigns.create({ subject: `Figures ${ids.length}`, html: '<p>x</p>' })).id);
    const id = ids.at(-1)!;
    assert.ok(id >= 10, 'an id of two digits');
    const expected = await notify().campaigns.getCampaignStats(id);
    for (const text of [String(id), ` ${id} `]) assert.deepEqual(await notify().campaigns.getCampaignStats(text as unknown as number), expected, text);
  });

  test('refusals say what was wrong and name the field', async () => {
    assert.deepEqual(await refusal(notify().campaigns.getCampaignStats(987_654)), ['NOT_FOUND', 'Campaign 987654 does not exist', { campaignId: 987_654 }]);
    assert.deepEqual(await refusal(notify().campaigns.getCampaignStats('x1' as unknown as number)), [
      'INVALID_INPUT',
      'Campaign id must be a positive whole number (got "x1")',
      { field: 'campaignId' },
    ]);
    const id = (await notify().campaigns.create({ subject: 'Buckets', html: '<p>x</p>' })).id;
    assert.deepEqual(await refusal(notify().campaigns.getCampaignReport(id, { bucketMs: 366 * DAY + 1 })), [
      'INVALID_INPUT',
      'bucketMs must be a whole number of milliseconds between one minute and a year',
      { field: 'bucketMs' },
    ]);
  });

  test('a report without engagement: hourly and empty; a bucket of 366 days is allowed', async () => {
    const id = (await notify().campaigns.create({ subject: 'Quiet', html: '<p>x</p>' })).id;
    assert.deepEqual((await notify().campaigns.getCampaignReport(id)).timeline, { bucketMs: 3_600_000, buckets: [] });
    assert.deepEqual((await notify().campaigns.getCampaignReport(id, { bucketMs: 366 * DAY })).timeline, { bucketMs: 366 * DAY, buckets: [] });
  });

  test('the campaign list: a sent campaign has its send time, a draft none; a limit that is no number lists one', async () => {
    await notify().contacts.upsert({ email: 'list-reader@example.com', lists: ['figures'] });
    const sent = await notify().campaigns.create({ subject: 'Sent one', html: '<p>x</p>', list: 'figures' });
    clock.advance(minutes(3));
    while (!(await notify().campaigns.send(sent.id)).done);
    const draft = await notify().campaigns.create({ subject: 'Draft one', html: '<p>x</p>' });
    const list = await createStatsService(notify().context).listCampaigns({ limit: 500 });
    const byId = new Map(list.map((c) => [c.id, c]));
    assert.equal(byId.get(draft.id)?.sent_at, null);
    assert.equal(byId.get(sent.id)?.sent_at?.getTime(), T0 + minutes(3));
    assert.equal((await createStatsService(notify().context).listCampaigns({ limit: Number.NaN })).length, 1);
    assert.equal((await createStatsService(notify().context).listCampaigns({ limit: 2, offset: Number.NaN })).length, 2);
  });
});

forEachEngine('a contact timeline through the library', (h) => {
  const clock = manualClock(T0);
  const notify = useNotify(h, { clock });

  test('a send and the open at the same instant: the open first; a send shows when it was sent; no own status change: created with its status', async () => {
    const ann = await notify().contacts.upsert({ email: 'same-instant@example.com', lists: ['instant'] });
    clock.advance(minutes(1));
    const c = await notify().campaigns.create({ name: 'Instant', subject: 'Instant', html: '<p>x</p>', list: 'instant' });
    while (!(await notify().campaigns.send(c.id)).done);
    const send = await notify().context.store.db.selectFrom('notify_sends').select(['id', 'token']).where('contact_id', '=', ann.id).executeTakeFirstOrThrow();
    assert.equal((await call(notify(), `/notify/open/${send.token}`, HUMAN)).status, 200);
    await notify().flush();
    const timeline = async (limit?: number) => {
      const entries = await contactTimeline(notify().context, (await notify().contacts.get(ann.id))!, limit);
      return entries.map((e) => [(e.at.getTime() - T0) / 60_000, e.kind === 'event' ? e.type : e.kind === 'created' ? `created:${e.status}` : e.kind]);
    };
    assert.deepEqual(await timeline(), [
      [1, 'open'],
      [1, 'send'],
      [0, 'status'],
      [0, 'created:subscribed'],
    ]);
    assert.deepEqual(await timeline(2), [
      [1, 'open'],
      [1, 'send'],
    ]);
    // sent later than it was queued: the timeline shows the send time
    await notify()
      .context.store.db.updateTable('notify_sends')
      .set({ sent_at: T0 + minutes(5) })
      .where('id', '=', send.id)
      .execute();
    assert.deepEqual((await timeline())[0], [5, 'send']);

    // an event stored as a machine's without a reason (rows from before reasons were kept) says `machine`
    await notify()
      .context.store.events.insertMany([
        { type: 'open', send_id: Number(send.id), contact_id: ann.id, campaign_id: c.id, link_index: null, is_machine: 1, machine_reason: null, created_at: T0 + minutes(9) },
      ]);
    const [latest] = await contactTimeline(notify().context, (await notify().contacts.get(ann.id))!);
    assert.deepEqual(latest.kind === 'event' && [latest.type, latest.machine, latest.campaign], ['open', 'machine', { id: c.id, name: 'Instant' }]);
  });
});
