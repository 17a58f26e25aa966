import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newToken } from '../../src/core/tokens.ts';
import type { Store } from '../../src/store/contract.ts';
import { forEachEngine, useStore } from '../helpers/engines.ts';
import { insertCampaign } from '../helpers/sends.ts';

const now = Date.UTC(2026, 0, 1);

/** a campaign in `status` with n send rows of `rowStatus`, one contact each */
async function campaignWithSends(s: Store, n: number, status: 'sending' | 'paused', rowStatus: 'queued' | 'sending' = 'queued') {
  const campaignId = await insertCampaign(s);
  await s.db.updateTable('notify_campaigns').set({ status }).where('id', '=', campaignId).execute();
  const rows = [];
  for (let i = 0; i < n; i++) {
    const c = await s.contacts.upsert({ email: `o${i}-${newToken().slice(0, 6)}@example.com`, email_key: `o${i}-${newToken().slice(0, 6)}@example.com`, unsubscribe_token: newToken(), initialStatus: 'subscribed' }, now);
    rows.push({ token: newToken(), campaign_id: campaignId, contact_id: c.id, to_email: c.email, subject: 'S', status: rowStatus });
  }
  const sends = await s.sends.claim(rows, now);
  return { campaignId, ids: sends.map((r) => r.id).sort((a, b) => a - b) };
}

const read = (s: Store, ids: number[]) => s.db.selectFrom('notify_sends').selectAll().where('id', 'in', ids).orderBy('id').execute();

forEachEngine('send outcomes and starts (fixed-shape statements)', (h) => {
  const store = useStore(h);

  test('finish writes each outcome of a mixed group, only on rows still sending, and counts them', async () => {
    const s = store();
    const { ids } = await campaignWithSends(s, 5, 'sending', 'sending');
    // the fifth row was settled elsewhere (a reclaim): its outcome must not overwrite it
    await s.db.updateTable('notify_sends').set({ status: 'failed', error: 'interrupted' }).where('id', '=', ids[4]).execute();
    const changed = await s.sends.finish(
      [
        { id: ids[0], status: 'sent', message_id: '<a@x>' },
        { id: ids[1], status: 'failed', error: `550 it's "refused"` },
        { id: ids[2], status: 'deferred', error: '421 busy', next_attempt_at: now + 60_000 },
        { id: ids[3], status: 'sent', message_id: null },
        { id: ids[4], status: 'sent', message_id: '<late@x>' },
        { id: 999_999_999, status: 'sent', message_id: '<ghost@x>' },
      ],
      now + 5,
    );
    assert.equal(changed, 4);
    const rows = await read(s, ids);
    assert.deepEqual(
      rows.map((r) => ({ status: r.status, error: r.error, message_id: r.message_id, sent_at: r.sent_at === null ? null : Number(r.sent_at), next: r.next_attempt_at === null ? null : Number(r.next_attempt_at) })),
      [
        { status: 'sent', error: null, message_id: '<a@x>', sent_at: now + 5, next: null },
        { status: 'failed', error: `550 it's "refused"`, message_id: null, sent_at: null, next: null },
        { status: 'deferred', error: '421 busy', message_id: null, sent_at: null, next: now + 60_000 },
        { status: 'sent', error: null, message_id: null, sent_at: now + 5, next: null },
        { status: 'failed', error: 'interrupted', message_id: null, sent_at: null, next: null },
      ],
    );
    assert.equal(await s.sends.finish([], now), 0);
  });

  test('finish inside a transaction that rolls back leaves every row as it was', async () => {
    const s = store();
    const { ids } = await campaignWithSends(s, 3, 'sending', 'sending');
    await assert.rejects(
      s.transaction(async (tx) => {
        assert.equal(await tx.sends.finish(ids.map((id) => ({ id, status: 'sent' as const, message_id: `<${id}@x>` })), now), 3);
        throw new Error('abandoned');
      }),
      /abandoned/,
    );
    assert.deepEqual(
      (await read(s, ids)).map((r) => r.status),
      ['sending', 'sending', 'sending'],
    );
  });

  const startOnly = async (s: Store, campaignId: number, ids: number[], at: number) => (await s.campaigns.writeSendGroup(campaignId, { start: ids, outcomes: [], counts: {} }, at)).started;

  test('writeSendGroup starts only queued rows of a sending campaign, any number at once, and counts the attempt', async () => {
    const s = store();
    const { campaignId, ids } = await campaignWithSends(s, 620, 'sending');
    await s.db.updateTable('notify_sends').set({ status: 'sent' }).where('id', '=', ids[0]).execute();
    const started = await startOnly(s, campaignId, ids, now + 1);
    assert.deepEqual(
      started.map((r) => r.id).sort((a, b) => a - b),
      ids.slice(1),
    );
    assert.ok(started.every((r) => r.attempts === 1));
    const rows = await read(s, ids);
    assert.equal(rows.filter((r) => r.status === 'sending' && Number(r.updated_at) === now + 1).length, 619);
    // a second start of the same rows finds none queued: no send is handed over twice
    assert.deepEqual(await startOnly(s, campaignId, ids.slice(0, 3), now + 2), []);
    assert.deepEqual(await startOnly(s, campaignId, [], now + 2), []);
  });

  test('writeSendGroup on a campaign no longer sending starts nothing', async () => {
    const s = store();
    const { campaignId, ids } = await campaignWithSends(s, 2, 'paused');
    assert.deepEqual(await startOnly(s, campaignId, ids, now), []);
    assert.deepEqual(
      (await read(s, ids)).map((r) => [r.status, Number(r.attempts)]),
      [
        ['queued', 0],
        ['queued', 0],
      ],
    );
  });

  test('writeSendGroup starts, finishes and counts in one call; outcomes land even once the campaign is paused', async () => {
    const s = store();
    const { campaignId, ids } = await campaignWithSends(s, 6, 'sending');
    const [a, b, c, d, e, f] = ids;
    await startOnly(s, campaignId, [a, b, c], now);
    const { started } = await s.campaigns.writeSendGroup(
      campaignId,
      {
        start: [d, e],
        outcomes: [
          { id: a, status: 'sent', message_id: '<a@x>' },
          { id: b, status: 'deferred', error: '421 busy', next_attempt_at: now + 60_000 },
          { id: f, status: 'sent', message_id: '<never-started@x>' },
        ],
        counts: { sent: 1 },
      },
      now + 7,
    );
    assert.deepEqual(started.map((r) => [r.id, r.attempts]).sort(), [
      [d, 1],
      [e, 1],
    ]);
    assert.deepEqual(
      (await read(s, ids)).map((r) => [r.status, r.message_id, r.error, r.sent_at === null ? null : Number(r.sent_at), r.next_attempt_at === null ? null : Number(r.next_attempt_at)]),
      [
        ['sent', '<a@x>', null, now + 7, null],
        ['deferred', null, '421 busy', null, now + 60_000],
        ['sending', null, null, null, null],
        ['sending', null, null, null, null],
        ['sending', null, null, null, null],
        // an outcome for a row that is not `sending` changes nothing
        ['queued', null, null, null, null],
      ],
    );
    assert.equal((await s.counters.get(campaignId)).sent, 1);

    await s.db.updateTable('notify_campaigns').set({ status: 'paused' }).where('id', '=', campaignId).execute();
    const late = await s.campaigns.writeSendGroup(campaignId, { start: [f], outcomes: [{ id: c, status: 'failed', error: '550 no' }], counts: { failed: 1 } }, now + 8);
    assert.deepEqual(late, { started: [], suppressed: [] });
    assert.deepEqual(
      (await read(s, [c, f])).map((r) => [r.status, r.error]),
      [
        ['failed', '550 no'],
        ['queued', null],
      ],
    );
    const counters = await s.counters.get(campaignId);
    assert.deepEqual([counters.sent, counters.failed], [1, 1]);
    // nothing to write: no statement, no change
    assert.deepEqual(await s.campaigns.writeSendGroup(campaignId, { start: [], outcomes: [], counts: {} }, now + 9), { started: [], suppressed: [] });
  });
});
