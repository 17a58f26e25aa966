import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createNotify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';

const SEGMENT = { all: [{ list: 'members' }, { attr: 'plan', eq: 'pro' }, { attr: 'age', gt: 30 }, { not: { opened: 1, humanOnly: true } }] };

test('[postgres] counting a segment over 100,000 contacts answers in under 1 s; a page of a list is as fast at the end as at the start', { skip: !process.env.NOTIFY_TEST_PG_URL }, async () => {
  const { url, cleanup } = freshDatabaseUrl('postgres');
  const notify = await createNotify(testOptions(url));
  try {
    const db = notify.context.store.db;
    await notify.lists.create({ name: 'members' });
    await notify.campaigns.create({ subject: 'First', text: 'x' });
    // one statement each: the test is about reading them
    await sql`insert into notify_contacts (email, email_key, status, unsubscribe_token, attributes, created_at, updated_at)
      select 'p' || i || '@example.com', 'p' || i || '@example.com', 'subscribed', 'tok' || lpad(i::text, 19, '0'),
        jsonb_build_object('plan', case when i % 3 = 0 then 'pro' else 'free' end, 'age', i % 80), 1000 + i, 1000 + i
      from generate_series(1, 100000) as i`.execute(db);
    await sql`insert into notify_list_members (list_id, contact_id, created_at) select l.id, c.id, 1 from notify_contacts c, notify_lists l where c.id % 2 = 0`.execute(db);
    await sql`analyze`.execute(db);
    const started = performance.now();
    const count = await notify.contacts.count({ segment: SEGMENT });
    const ms = performance.now() - started;
    // multiples of 6 (even, divisible by 3) with i % 80 > 30
    let expected = 0;
    for (let i = 6; i <= 100000; i += 6) if (i % 80 > 30) expected++;
    assert.equal(count, expected);
    assert.ok(ms < 1000, `count took ${ms.toFixed(0)} ms`);
    const first = performance.now();
    const p1 = await notify.contacts.list({ list: 'members', limit: 100 });
    const firstMs = performance.now() - first;
    let page = p1;
    // jump to the end through a cursor taken from a late id
    const late = await notify.contacts.list({ list: 'members', limit: 100, segment: { createdAfter: new Date(1000 + 99000).toISOString() } });
    const last = performance.now();
    page = await notify.contacts.list({ list: 'members', limit: 100, after: late.next ?? undefined });
    const lastMs = performance.now() - last;
    assert.ok(page.contacts.length > 0);
    assert.ok(lastMs < 200 && firstMs < 200, `first page ${firstMs.toFixed(0)} ms, a late page ${lastMs.toFixed(0)} ms`);
    console.log(`segment count ${ms.toFixed(0)} ms over 100,000 contacts; list pages: first ${firstMs.toFixed(0)} ms, late ${lastMs.toFixed(0)} ms`);
  } finally {
    await notify.close();
    await createStore(url).dialect.destroyData();
    cleanup();
  }
});
