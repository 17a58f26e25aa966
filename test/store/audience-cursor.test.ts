import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newToken } from '../../src/core/tokens.ts';
import { forEachEngine, useStore } from '../helpers/engines.ts';

/**
 * The store contract for CampaignsRepo.unsent read from a run's cursor: the cursor bounds the
 * send rows and the list members it looks at as well as the contacts, and the answer is the same
 * as without that bound: the list's subscribed members after the cursor that have no send row.
 */
const now = Date.UTC(2026, 0, 1);

forEachEngine('store contract: campaign audience from a cursor', (h) => {
  const store = useStore(h);
  let n = 0;
  const person = async () => (await store().contacts.upsert({ email: `a-${n}@example.com`, email_key: `a-${n++}@example.com`, unsubscribe_token: newToken(), initialStatus: 'subscribed' }, now)).id;

  test('unsent(afterId): members after the cursor without a send row, in id order', async () => {
    const list = await store().lists.create({ name: `list-${n++}`, description: null, public: false }, now);
    assert.ok(list);
    const ids: number[] = [];
    for (let i = 0; i < 8; i++) ids.push(await person());
    // ids[3] never joins; ids[6] left the list
    for (const i of [0, 1, 2, 4, 5, 6, 7]) await store().lists.setMembership(list.id, ids[i], i === 6 ? 'unsubscribed' : 'subscribed', now);
    const campaignId = Number((await store().db.insertInto('notify_campaigns').values({ subject: 'C', status: 'sending', list_id: list.id, created_at: now }).returning('id').executeTakeFirstOrThrow()).id);
    const campaign = { id: campaignId, list: list.name, segment: null };
    // a send row already (an earlier chunk, or another run), before and after the cursor
    for (const i of [0, 4]) await store().db.insertInto('notify_sends').values({ token: newToken(), campaign_id: campaignId, contact_id: ids[i], to_email: 'x@example.com', subject: 'C', status: 'sent', created_at: now, updated_at: now }).execute();

    const from = async (after: number, limit = 10) => (await store().campaigns.unsent(campaign, after, limit)).map((c) => c.id);
    assert.deepEqual(await from(0), [ids[1], ids[2], ids[5], ids[7]]);
    assert.deepEqual(await from(ids[1]), [ids[2], ids[5], ids[7]]);
    assert.deepEqual(await from(ids[2], 1), [ids[5]], 'the limit counts only the members it returns');
    assert.deepEqual(await from(ids[5]), [ids[7]]);
    assert.deepEqual(await from(ids[7]), []);
    assert.equal(await store().campaigns.countUnsent(campaign), 4, 'the count has no cursor');
  });
});
