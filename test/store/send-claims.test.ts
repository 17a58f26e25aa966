import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newToken } from '../../src/core/tokens.ts';
import { forEachEngine, useStore } from '../helpers/engines.ts';
import { insertCampaign } from '../helpers/sends.ts';

const now = Date.UTC(2026, 0, 1, 12);

forEachEngine('send claims', (h) => {
  const store = useStore(h);

  test('a claim returns exactly the rows it created, as a read of them gives them back', async () => {
    const s = store();
    const campaignId = await insertCampaign(s);
    const contacts = await Promise.all([0, 1, 2].map((i) => s.contacts.upsert({ email: `claim${i}@example.com`, email_key: `claim${i}@example.com`, unsubscribe_token: newToken(), initialStatus: 'subscribed' }, now)));
    const row = (i: number, status: 'queued' | 'suppressed') => ({ token: newToken(), campaign_id: campaignId, contact_id: contacts[i].id, to_email: contacts[i].email, subject: `S${i}`, status });
    const first = await s.sends.claim([row(0, 'queued'), row(1, 'suppressed')], now);
    assert.equal(first.length, 2);
    // the pair (campaign, contact 0) is taken: only contact 2's row is created, at the later time
    const second = await s.sends.claim([row(0, 'queued'), row(2, 'queued')], now + 1000);
    assert.deepEqual(
      second.map((r) => r.contact_id),
      [contacts[2].id],
    );
    for (const claimed of [...first, ...second]) assert.deepEqual(claimed, await s.sends.getById(claimed.id));
    assert.deepEqual(
      [...first, ...second].map((r) => [r.status, r.subject, r.created_at.getTime(), r.attempts]),
      [
        ['queued', 'S0', now, 0],
        ['suppressed', 'S1', now, 0],
        ['queued', 'S2', now + 1000, 0],
      ],
    );
  });
});
