// The short one-click link of the List-Unsubscribe header (/notify/u/<token>): the same flow as
// the long /notify/unsubscribe/<contact token>?s=<send token> link, which mail already delivered
// carries and which keeps working.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { readSendUnsubscribeToken, SEND_UNSUBSCRIBE_TOKEN_LENGTH, sendUnsubscribeToken } from '../../src/core/tokens.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { insertCampaign, insertSend } from '../helpers/sends.ts';

const ONE_CLICK = () => ({ method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) });

test('the short token names the send, is 24 characters, and fails on any change, another secret or a bad shape', () => {
  const token = sendUnsubscribeToken('secret', 12345)!;
  assert.equal(token.length, SEND_UNSUBSCRIBE_TOKEN_LENGTH);
  assert.match(token, /^[A-Za-z0-9_-]{24}$/);
  assert.equal(readSendUnsubscribeToken('secret', token), 12345);
  assert.equal(readSendUnsubscribeToken('secret', sendUnsubscribeToken('secret', 2 ** 40 - 1)), 2 ** 40 - 1);
  assert.equal(readSendUnsubscribeToken('other secret', token), undefined);
  for (let i = 0; i < token.length; i++) {
    const changed = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
    assert.equal(readSendUnsubscribeToken('secret', changed), undefined, `character ${i} changed`);
  }
  for (const bad of ['', token.slice(1), `${token}A`, `${token.slice(0, 23)}=`, `${token.slice(0, 23)}+`, 'A'.repeat(24), 'A'.repeat(28), undefined, null]) {
    assert.equal(readSendUnsubscribeToken('secret', bad), undefined, String(bad));
  }
  // the 28-character form (a 128-bit HMAC) earlier mail carries still names its send; changed, it does not
  const id = Buffer.from([0, 0, 0, 0x30, 0x39]);
  const legacy = Buffer.concat([id, createHmac('sha256', 'secret').update(Buffer.concat([Buffer.from('unsubscribe:'), id])).digest().subarray(0, 16)]).toString('base64url');
  assert.equal(legacy.length, 28);
  assert.equal(readSendUnsubscribeToken('secret', legacy), 12345);
  assert.equal(legacy.slice(0, 24), token, 'the short form is the long one cut: one HMAC, two lengths');
  assert.equal(readSendUnsubscribeToken('secret', `${legacy.slice(0, 27)}${legacy[27] === 'A' ? 'B' : 'A'}`), undefined);
  // ids that do not fit 5 bytes get no short token (the long link is used)
  for (const id of [2 ** 40, -1, 1.5, Number.NaN]) assert.equal(sendUnsubscribeToken('secret', id), undefined, String(id));
});

forEachEngine('/notify/u (short one-click link)', (h) => {
  const notify = useNotify(h);
  const shortPath = (sendId: number) => `/notify/u/${sendUnsubscribeToken(notify().context.secret, sendId)}`;

  test('one-click POST unsubscribes the send’s contact, credited to its campaign; again changes nothing; HEAD and GET answer 200', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const send = await insertSend(notify(), { email: 'short@example.com', campaignId });
    assert.equal((await call(notify(), shortPath(send.id), { method: 'HEAD' })).status, 200);
    const res = await call(notify(), shortPath(send.id), ONE_CLICK());
    assert.equal(res.status, 200);
    const page = await res.text();
    assert.match(page, /s\*\*\*\*@example\.com will not receive/);
    assert.equal((await notify().contacts.get('short@example.com'))?.status, 'unsubscribed');
    const events = await notify().context.store.db.selectFrom('notify_events').select(['send_id', 'campaign_id', 'metadata']).where('contact_id', '=', send.contactId).where('type', '=', 'unsubscribe').execute();
    assert.equal(events.length, 1);
    assert.deepEqual([Number(events[0].send_id), Number(events[0].campaign_id)], [send.id, campaignId]);
    assert.equal((await call(notify(), shortPath(send.id), ONE_CLICK())).status, 200);
    assert.equal((await call(notify(), shortPath(send.id))).status, 200);
    const again = await notify().context.store.db.selectFrom('notify_events').select('id').where('contact_id', '=', send.contactId).where('type', '=', 'unsubscribe').execute();
    assert.equal(again.length, 1, 'idempotent');
  });

  test('a client that keeps the white space of a fold before the token (mailparser and Python do) still unsubscribes: /notify/u/%20<token>', async () => {
    const send = await insertSend(notify(), { email: 'folded@example.com' });
    const token = sendUnsubscribeToken(notify().context.secret, send.id)!;
    // what fetch() makes of `https://host/notify/u/ <token>`: the space percent-encoded; a tab or two spaces likewise
    assert.equal(new URL(`http://h.example/notify/u/ ${token}`).pathname, `/notify/u/%20${token}`);
    for (const path of [`/notify/u/%20${token}`, `/notify/u/%09${token}`, `/notify/u/%20%20${token}`]) {
      assert.equal((await call(notify(), path, { method: 'HEAD' })).status, 200, path);
    }
    assert.equal((await call(notify(), `/notify/u/%20${token}`, ONE_CLICK())).status, 200);
    assert.equal((await notify().contacts.get('folded@example.com'))?.status, 'unsubscribed');
    // white space does not make a bad token good, nor a space inside the token a different one
    const forged = sendUnsubscribeToken('not the secret', send.id)!;
    for (const path of [`/notify/u/%20${forged}`, `/notify/u/${token.slice(0, 12)}%20${token.slice(12)}`, '/notify/u/%20']) {
      assert.equal((await call(notify(), path, ONE_CLICK())).status, 404, path);
    }
  });

  test('the long link of mail already delivered still works', async () => {
    const send = await insertSend(notify(), { email: 'old@example.com' });
    const res = await call(notify(), `/notify/unsubscribe/${send.unsubscribeToken}?s=${send.token}`, ONE_CLICK());
    assert.equal(res.status, 200);
    assert.equal((await notify().contacts.get('old@example.com'))?.status, 'unsubscribed');
  });

  test('bad short tokens: 404, nothing looked up or changed; an erased person’s link: 410', async () => {
    const send = await insertSend(notify(), { email: 'keep@example.com' });
    const good = sendUnsubscribeToken(notify().context.secret, send.id)!;
    const forged = sendUnsubscribeToken('not the secret', send.id)!;
    const unknown = sendUnsubscribeToken(notify().context.secret, send.id + 10_000)!;
    for (const path of [`/notify/u/${forged}`, `/notify/u/${unknown}`, `/notify/u/${good.slice(1)}`, `/notify/u/${good}/extra`, '/notify/u/', `/notify/u/${send.token}`, `/notify/u/${send.unsubscribeToken}`]) {
      assert.equal((await call(notify(), path, ONE_CLICK())).status, 404, path);
      assert.equal((await call(notify(), path, { method: 'HEAD' })).status, 404, path);
    }
    assert.equal((await notify().contacts.get('keep@example.com'))?.status, 'subscribed');

    await notify().contacts.erase(send.contactId);
    assert.equal((await call(notify(), `/notify/u/${good}`, ONE_CLICK())).status, 410);
    assert.equal((await call(notify(), `/notify/u/${good}`, { method: 'HEAD' })).status, 410);
  });
});

forEachEngine('/notify/u with unsubscribeConfirm', (h) => {
  const notify = useNotify(h, { unsubscribeConfirm: true });

  test('GET shows the confirm page whose form posts to the long link; the mail client’s POST still acts at once', async () => {
    const send = await insertSend(notify(), { email: 'confirm@example.com' });
    const path = `/notify/u/${sendUnsubscribeToken(notify().context.secret, send.id)}`;
    const page = await call(notify(), path);
    assert.equal(page.status, 200);
    assert.match(await page.text(), new RegExp(`action="/notify/unsubscribe/${send.unsubscribeToken}\\?s=${send.token}"`));
    assert.equal((await notify().contacts.get('confirm@example.com'))?.status, 'subscribed');
    assert.equal((await call(notify(), path, ONE_CLICK())).status, 200);
    assert.equal((await notify().contacts.get('confirm@example.com'))?.status, 'unsubscribed');
  });
});
