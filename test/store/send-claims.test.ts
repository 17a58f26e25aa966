import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newToken } from '../../src/core/tokens.ts';
import type { Store } from '../../src/store/contract.ts';
import { forEachEngine, useStore } from '../helpers/engines.ts';
import { insertCampaign } from '../helpers/sends.ts';

const now = Date.UTC(2026, 0, 1, 12);

async function contacts(s: Store, n: number) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const email = `claim${i}-${newToken().slice(0, 6)}@example.com`;
    out.push(await s.contacts.upsert({ email, email_key: email, unsubscribe_token: newToken(), initialStatus: 'subscribed' }, now));
  }
  return out;
}

forEachEngine('send claims (records built from what was written)', (h) => {
  const store = useStore(h);

  test('a claim returns exactly the records a read of its new rows gives, and none for the rows another claim holds', async () => {
    const s = store();
    const campaignId = await insertCampaign(s, 'Claimed');
    const people = await contacts(s, 4);
    const row = (c: (typeof people)[number], status: 'queued' | 'suppressed' = 'queued') => ({ token: newToken(), campaign_id: campaignId, contact_id: c.id, to_email: c.email, subject: 'Claimed', status });
    const first = await s.sends.claim([row(people[0]), row(people[1], 'suppressed')], now);
    assert.equal(first.length, 2);
    // people[0] already has its row: only the two others are this claim's
    const second = await s.sends.claim([row(people[0]), row(people[2]), row(people[3], 'suppressed')], now + 7);
    assert.deepEqual(second.map((r) => r.contact_id).sort(), [people[2].id, people[3].id].sort());
    for (const claimed of [...first, ...second]) assert.deepEqual(claimed, await s.sends.getById(claimed.id));
    assert.deepEqual(second.find((r) => r.contact_id === people[3].id)?.created_at, new Date(now + 7));
  });

  test('a claimed row with suppressed recipients and an error returns them as a read does', async () => {
    const s = store();
    const [c] = await contacts(s, 1);
    const suppressed_recipients = [{ field: 'cc' as const, contact_id: c.id + 1, status: 'bounced' as const }];
    const rows = await s.sends.claim([{ token: newToken(), contact_id: c.id, to_email: c.email, subject: 'One-off', status: 'sent', error: 'partly', suppressed_recipients }], now);
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0], await s.sends.getById(rows[0].id));
    assert.deepEqual(rows[0].suppressed_recipients, suppressed_recipients);
    assert.notEqual(rows[0].suppressed_recipients, suppressed_recipients, 'a copy, not the caller\'s array');
  });
});
