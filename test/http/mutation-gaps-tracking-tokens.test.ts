import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { insertCampaign, insertSend } from '../helpers/sends.ts';

/**
 * Tokens where the person or the database sees them: the unsubscribe page carries on only a send token
 * of the exact form we issue, and an erased contact's token is kept as its SHA-256 (base64url), so
 * that rows written by earlier versions keep matching. test/http/unsubscribe.test.ts reads the flows.
 */
const actionOf = (html: string) => /<form[^>]*action="([^"]*)"/.exec(html)?.[1];

forEachEngine('tokens seen on the unsubscribe page and in tombstones', (h) => {
  const notify = useNotify(h, { unsubscribeConfirm: true });

  test('the confirm form carries ?s= only for a send token of exactly 22 token characters', async () => {
    const send = await insertSend(notify(), { campaignId: await insertCampaign(notify().context.store) });
    const page = async (s: string) => {
      const res = await call(notify(), `/notify/unsubscribe/${send.unsubscribeToken}?s=${encodeURIComponent(s)}`);
      assert.equal(res.status, 200, s);
      return actionOf(await res.text());
    };
    const plain = `/notify/unsubscribe/${send.unsubscribeToken}`;
    assert.equal(await page(send.token), `${plain}?s=${send.token}`);
    for (const s of [`${send.token}A`, `A${send.token}`, `${send.token}"x`, `x"${send.token}`]) assert.equal(await page(s), plain, s);
  });

  test("an erased contact's unsubscribe token is kept as its SHA-256, base64url", async () => {
    const contact = await notify().contacts.upsert({ email: 'hashed@example.com' });
    assert.equal(await notify().contacts.erase(contact.id), true);
    const rows = await notify().context.store.db.selectFrom('notify_tombstones').select('token_hash').execute();
    const expected = createHash('sha256').update(contact.unsubscribe_token).digest('base64url');
    assert.ok(
      rows.some((r) => r.token_hash === expected),
      JSON.stringify(rows),
    );
  });
});
