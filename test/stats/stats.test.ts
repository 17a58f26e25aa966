import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { BUCKETS, createStatsService, pickBucket } from '../../src/core/stats.ts';
import { newToken } from '../../src/core/tokens.ts';
import { isNotifyError } from '../../src/errors.ts';
import type { Notify } from '../../src/notify.ts';
import type { EventRow } from '../../src/core/storage/events.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';

const T0 = Date.UTC(2026, 0, 1, 9, 0);

async function campaign(notify: Notify, subject = 'Hello') {
  const row = await notify.context.store.db.insertInto('notify_campaigns').values({ subject, name: `${subject} campaign`, status: 'sent', created_at: T0, sent_at: T0 }).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

async function send(notify: Notify, campaignId: number, status = 'sent') {
  const row = await notify.context.store.db
    .insertInto('notify_sends')
    .values({ token: newToken(), campaign_id: campaignId, to_email: 'x@example.com', subject: 's', status, created_at: T0, updated_at: T0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

const event = (campaignId: number, sendId: number, type: 'open' | 'click', at: number, extra: Partial<EventRow> = {}): EventRow => ({
  type,
  send_id: sendId,
  contact_id: null,
  campaign_id: campaignId,
  link_index: type === 'click' ? 0 : null,
  is_machine: 0,
  machine_reason: null,
  created_at: at,
  ...extra,
});

forEachEngine('campaign stats', (h) => {
  const clock = manualClock(T0);
  const notify = useNotify(h, { clock });

  test('getCampaignStats is exactly { total, sent, failed, opened, clicked } from the counters', async () => {
    const id = await campaign(notify());
    assert.deepEqual(await notify().campaigns.getCampaignStats(id), { total: 0, sent: 0, failed: 0, opened: 0, clicked: 0 });
    await notify().context.store.counters.add(new Map([[id, { total: 10, sent: 8, failed: 1, suppressed: 1, opened: 5, clicked: 2, human_opened: 3, human_clicked: 2 }]]));
    const stats = await notify().campaigns.getCampaignStats(id);
    assert.deepEqual(stats, { total: 10, sent: 8, failed: 1, opened: 5, clicked: 2 });
    assert.deepEqual(Object.keys(stats), ['total', 'sent', 'failed', 'opened', 'clicked']);
    assert.deepEqual(await notify().campaigns.getCampaignStats(String(id) as unknown as number), stats, 'a string of digits (CLI, URL) works');
  });

  test('getCampaignStats never scans notify_sends: rows without counter deltas do not show', async () => {
    const id = await campaign(notify());
    for (let i = 0; i < 3; i++) await send(notify(), id);
    assert.deepEqual(await notify().campaigns.getCampaignStats(id), { total: 0, sent: 0, failed: 0, opened: 0, clicked: 0 });
  });

  test('unknown campaign is NOT_FOUND; malformed ids are INVALID_INPUT', async () => {
    await assert.rejects(notify().campaigns.getCampaignStats(987654), (e) => isNotifyError(e, 'NOT_FOUND'));
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 60, 'abc', '1; drop table notify_sends', '', '1e3', null, undefined, {}]) {
      await assert.rejects(notify().campaigns.getCampaignStats(bad as number), (e) => isNotifyError(e, 'INVALID_INPUT'), String(bad));
    }
  });

  test('report: suppressed, bounced, complained, unsubscribed and human-only figures beside the raw ones', async () => {
    const id = await campaign(notify());
    await notify().context.store.counters.add(new Map([[id, { total: 20, sent: 16, failed: 1, suppressed: 3, opened: 10, clicked: 4, human_opened: 6, human_clicked: 3, bounced: 2, complained: 1, unsubscribed: 2 }]]));
    const r = await notify().campaigns.getCampaignReport(id);
    assert.deepEqual(r.stats, { total: 20, sent: 16, failed: 1, opened: 10, clicked: 4 });
    assert.deepEqual(r.human, { opened: 6, clicked: 3 });
    assert.deepEqual([r.suppressed, r.bounced, r.complained, r.unsubscribed], [3, 2, 1, 2]);
    assert.equal(r.rates.opened, 10 / 16);
    assert.equal(r.rates.humanClicked, 3 / 16);
    assert.equal(r.subject, 'Hello');
    assert.ok(r.created_at instanceof Date);
    assert.deepEqual(r.links, []);
    assert.deepEqual(r.timeline.buckets, []);
    const empty = await notify().campaigns.getCampaignReport(await campaign(notify()));
    assert.equal(empty.rates.opened, null, 'no rate before anything was sent');
  });

  test('per-link clicks: every click, unique sends, human clicks, with the URL of the campaign scope', async () => {
    const id = await campaign(notify());
    const other = await campaign(notify());
    await notify().context.store.links.ensureScope(`c${id}`, ['https://a.example/', 'https://b.example/?q=<x>'], T0);
    const [s1, s2] = [await send(notify(), id), await send(notify(), id)];
    await notify().context.store.events.insertMany([
      event(id, s1, 'click', T0, { link_index: 0 }),
      event(id, s1, 'click', T0 + 1, { link_index: 0 }),
      event(id, s2, 'click', T0 + 2, { link_index: 0, is_machine: 1, machine_reason: 'scanner-fast-click' }),
      event(id, s2, 'click', T0 + 3, { link_index: 1 }),
      event(id, s2, 'click', T0 + 4, { link_index: 7 }),
      event(other, s1, 'click', T0, { link_index: 0 }),
      event(id, s1, 'open', T0),
    ]);
    const { links } = await notify().campaigns.getCampaignReport(id);
    assert.deepEqual(links, [
      { index: 0, url: 'https://a.example/', clicks: 3, unique: 2, human: 2 },
      { index: 1, url: 'https://b.example/?q=<x>', clicks: 1, unique: 1, human: 1 },
      { index: 7, url: null, clicks: 1, unique: 1, human: 1 },
    ]);
  });

  test('timeline: opens and clicks per bucket, gaps filled with zeros, human split out, machine reasons', async () => {
    const id = await campaign(notify());
    const s = await send(notify(), id);
    const at = (m: number) => T0 + minutes(m);
    await notify().context.store.events.insertMany([
      event(id, s, 'open', at(0), { is_machine: 1, machine_reason: 'apple-mpp' }),
      event(id, s, 'open', at(1), { is_machine: 1, machine_reason: 'apple-mpp' }),
      event(id, s, 'open', at(2)),
      event(id, s, 'click', at(3)),
      event(id, s, 'open', at(125)),
      event(id, s, 'click', at(179), { is_machine: 1, machine_reason: 'scanner-fast-click' }),
      { ...event(id, s, 'open', at(5)), type: 'soft_bounce' },
    ]);
    const r = await notify().campaigns.getCampaignReport(id);
    assert.equal(r.timeline.bucketMs, minutes(5), '3 hours fit in 48 buckets of 5 minutes');
    const buckets = r.timeline.buckets;
    assert.equal(buckets.length, 36);
    assert.deepEqual(buckets[0], { start: new Date(T0), opens: 3, clicks: 1, humanOpens: 1, humanClicks: 1 });
    assert.deepEqual(buckets[25], { start: new Date(at(125)), opens: 1, clicks: 0, humanOpens: 1, humanClicks: 0 });
    assert.deepEqual(buckets[35], { start: new Date(at(175)), opens: 0, clicks: 1, humanOpens: 0, humanClicks: 0 });
    assert.equal(buckets.slice(1, 25).every((b) => b.opens + b.clicks === 0), true);
    assert.deepEqual(r.machine, [
      { type: 'open', reason: 'apple-mpp', events: 2 },
      { type: 'click', reason: 'scanner-fast-click', events: 1 },
    ]);
    const hourly = await notify().campaigns.getCampaignReport(id, { bucketMs: minutes(60) });
    assert.deepEqual(
      hourly.timeline.buckets.map((b) => [b.start.getTime(), b.opens, b.clicks]),
      [
        [T0, 3, 1],
        [at(60), 0, 0],
        [at(120), 1, 1],
      ],
    );
    for (const bad of [0, 1000, 1.5, -60_000, 10 ** 13]) {
      await assert.rejects(notify().campaigns.getCampaignReport(id, { bucketMs: bad }), (e) => isNotifyError(e, 'INVALID_INPUT'), String(bad));
    }
  });

  test('a years-long tail keeps the latest 500 buckets', async () => {
    const id = await campaign(notify());
    const s = await send(notify(), id);
    await notify().context.store.events.insertMany([event(id, s, 'open', T0), event(id, s, 'open', T0 + 1000 * minutes(60))]);
    const r = await notify().campaigns.getCampaignReport(id, { bucketMs: minutes(1) });
    assert.equal(r.timeline.buckets.length, 500);
    assert.equal(r.timeline.buckets.at(-1)!.opens, 1);
  });

  test('campaign list with stats, newest first; sequences with enrollments by status', async () => {
    const db = notify().context.store.db;
    const newest: number[] = [];
    for (const subject of ['L1', 'L2', 'L3', 'L4']) newest.unshift(await campaign(notify(), subject));
    const list = await notify().context.store.stats.listCampaigns(3);
    assert.deepEqual(
      list.map((c) => [Number(c.id), c.subject]),
      [
        [newest[0], 'L4'],
        [newest[1], 'L3'],
        [newest[2], 'L2'],
      ],
      'the three newest, newest first',
    );
    assert.deepEqual(
      (await notify().context.store.stats.listCampaigns(2, 1)).map((c) => Number(c.id)),
      newest.slice(1, 3),
      'offset skips the newest',
    );
    const campaigns = await createStatsService(notify().context).listCampaigns({ limit: 2 });
    assert.deepEqual(
      campaigns.map((c) => c.id),
      newest.slice(0, 2),
    );
    const seq = await db.insertInto('notify_sequences').values({ name: 'Welcome', created_at: T0 }).returning('id').executeTakeFirstOrThrow();
    const seqId = Number(seq.id);
    for (let i = 0; i < 2; i++) await db.insertInto('notify_steps').values({ sequence_id: seqId, position: i, delay_minutes: i * 60, subject: `Step ${i}`, created_at: T0 }).execute();
    const statuses = ['active', 'active', 'completed', 'failed', 'cancelled'];
    for (const [i, status] of statuses.entries()) {
      const c = await notify().contacts.upsert({ email: `seq${i}@example.com` });
      await db.insertInto('notify_enrollments').values({ sequence_id: seqId, contact_id: c.id, status, step_index: 0, attempts: 0, created_at: T0, updated_at: T0 }).execute();
    }
    await db.insertInto('notify_sequences').values({ name: 'Empty', created_at: T0 }).execute();
    const seqs = await createStatsService(notify().context).listSequences();
    const welcome = seqs.find((s) => s.name === 'Welcome')!;
    assert.deepEqual(welcome, { id: seqId, name: 'Welcome', steps: 2, enrollments: { active: 2, processing: 0, completed: 1, failed: 1, cancelled: 1 }, total: 5 });
    assert.deepEqual(seqs.find((s) => s.name === 'Empty')!.total, 0);
  });
});

test('pickBucket chooses the smallest readable bucket that fits about 48', () => {
  assert.equal(pickBucket(0), BUCKETS[0]);
  assert.equal(pickBucket(minutes(47)), minutes(1));
  assert.equal(pickBucket(minutes(48)), minutes(5));
  assert.equal(pickBucket(minutes(60 * 24 * 3)), minutes(60 * 3));
  assert.equal(pickBucket(10 ** 12), BUCKETS.at(-1));
});
