import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { fixture, importText, MAILCHIMP } from './helpers.ts';

forEachEngine('contacts:import reads a Mailchimp audience export as it comes', (h) => {
  const notify = useNotify(h);

  test('subscribed file: name from first + last, TAGS to lists, the rest as snake_case attributes', async () => {
    const res = await importText(notify(), fixture(MAILCHIMP.subscribed));
    assert.deepEqual({ ...res, rejected: res.rejected }, { created: 3, updated: 0, unchanged: 0, rejected: [], imported: 3 });
    const ada = await notify().contacts.get('ada@example.com');
    assert.equal(ada?.name, 'Ada Lovelace');
    assert.equal(ada?.status, 'subscribed');
    assert.deepEqual(ada?.lists, ['Blog, weekly', 'Say "hi"', 'VIP']);
    assert.deepEqual(ada?.attributes, {
      address: "12 St James's Square, London, SW1Y 4JH, GB",
      phone_number: '+44 20 7946 0000',
      member_rating: '4',
      optin_time: '2024-03-14 09:12:31',
      optin_ip: '203.0.113.7',
      confirm_time: '2024-03-14 09:14:00',
      confirm_ip: '203.0.113.7',
      latitude: '51.5074000',
      longitude: '-0.1278000',
      gmtoff: '0',
      dstoff: '1',
      timezone: 'Europe/London',
      cc: 'GB',
      region: 'ENG',
      last_changed: '2024-05-01 10:00:00',
      leid: '44877845',
      euid: 'c2cb0681af',
      notes: 'Met at the "Analytical" meetup\nasked for the engine notes',
    });
    assert.equal((await notify().contacts.get('linus@example.com'))?.name, 'Linus');
    assert.deepEqual((await notify().contacts.get('grace@example.com'))?.lists, []);
  });

  test('the same file again, with a BOM and CRLF line ends, changes nothing and says so', async () => {
    const again = `\uFEFF${fixture(MAILCHIMP.subscribed).replace(/\n(?=[a-z]+@)/g, '\r\n')}`;
    assert.match(again, /\r\ngrace@/);
    const res = await importText(notify(), again);
    assert.deepEqual([res.created, res.updated, res.unchanged, res.rejected], [0, 0, 3, []]);
  });

  test('the unsubscribed file (UNSUB_TIME) unsubscribes; the cleaned file (CLEAN_TIME) is bounced', async () => {
    const unsub = await importText(notify(), fixture(MAILCHIMP.unsubscribed));
    assert.deepEqual([unsub.created, unsub.updated, unsub.unchanged, unsub.rejected], [1, 1, 0, []]);
    const ada = await notify().contacts.get('ada@example.com');
    assert.equal(ada?.status, 'unsubscribed');
    assert.equal(ada?.attributes.unsub_reason, 'I no longer want to receive these emails');
    assert.equal(ada?.attributes.phone_number, '+44 20 7946 0000', 'an empty cell never erases a stored value');
    const margaret = await notify().contacts.get('margaret@example.com');
    assert.equal(margaret?.status, 'unsubscribed');
    assert.equal(margaret?.attributes.unsub_reason_other, 'Too many emails');

    const cleaned = await importText(notify(), fixture(MAILCHIMP.cleaned));
    assert.deepEqual([cleaned.created, cleaned.updated, cleaned.unchanged], [0, 1, 0]);
    assert.equal((await notify().contacts.get('grace@example.com'))?.status, 'bounced');
  });

  test('re-importing the subscribed file lifts no suppression', async () => {
    const res = await importText(notify(), fixture(MAILCHIMP.subscribed));
    // ada's and grace's LAST_CHANGED differ from what the later files stored: updated, status kept
    assert.deepEqual([res.created, res.updated, res.unchanged], [0, 2, 1]);
    assert.equal((await notify().contacts.get('ada@example.com'))?.status, 'unsubscribed');
    assert.equal((await notify().contacts.get('grace@example.com'))?.status, 'bounced');
    const explicit = await importText(notify(), 'email,status\ngrace@example.com,subscribed\nada@example.com,bounced\n');
    assert.equal((await notify().contacts.get('grace@example.com'))?.status, 'bounced', 'a status column saying subscribed does not lift a bounce');
    assert.equal((await notify().contacts.get('ada@example.com'))?.status, 'unsubscribed', 'one suppression is not swapped for another');
    assert.deepEqual([explicit.updated, explicit.unchanged], [0, 2]);
  });

  test('common headers: E-mail, a status column with cleaned, --status for a file without one, plain email,name', async () => {
    const res = await importText(notify(), 'E-mail,First Name,Last Name,Status\nk1@example.com,Kay,One,cleaned\nk2@example.com,,Two,unsubscribed\nk3@example.com,Kay,,\n');
    assert.deepEqual([res.created, res.rejected], [3, []]);
    assert.equal((await notify().contacts.get('k1@example.com'))?.status, 'bounced');
    assert.equal((await notify().contacts.get('k2@example.com'))?.name, 'Two');
    assert.equal((await notify().contacts.get('k2@example.com'))?.status, 'unsubscribed');
    assert.equal((await notify().contacts.get('k3@example.com'))?.status, 'subscribed');
    await importText(notify(), 'email,name\nk4@example.com,Kay Four\n', { status: 'bounced', lists: ['import'] });
    const k4 = await notify().contacts.get('k4@example.com');
    assert.deepEqual([k4?.name, k4?.status, k4?.lists], ['Kay Four', 'bounced', ['import']]);
  });

  test('an existing contact: new values update it, empty cells keep what is stored', async () => {
    await notify().contacts.upsert({ email: 'keep@example.com', name: 'Kept Name', attributes: { plan: 'pro' } });
    const empty = await importText(notify(), 'email,name,plan\nkeep@example.com,,\n');
    assert.deepEqual([empty.updated, empty.unchanged], [0, 1]);
    const changed = await importText(notify(), 'email,name,plan\nkeep@example.com,,team\n');
    assert.deepEqual([changed.updated, changed.unchanged], [1, 0]);
    const keep = await notify().contacts.get('keep@example.com');
    assert.deepEqual([keep?.name, keep?.attributes], ['Kept Name', { plan: 'team' }]);
  });
});
