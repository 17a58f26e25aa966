// PostgreSQL settings on the `database` URL as a deployment writes them (notify.config.json, a
// string): `?options=-c name=value` reaches notify's sessions (here synchronous_commit=off, the trade
// the README describes), a campaign run sends as usual, and a setting PostgreSQL does not know is
// refused with a clear error, nothing sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, describeEachEngine } from './harness.ts';

const CSV = ['email,name', 'ann@example.com,Ann', 'bob@example.com,Bob', 'cy@example.com,Cy'].join('\n');
const withOptions = (url: string, options: string) => `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(options)}`;

describeEachEngine('as deployed: PostgreSQL settings through ?options= on the database URL', (engine) => {
  let d: Deployment;
  before(async () => {
    d = await Deployment.open(engine);
    d.writeFile('readers.csv', CSV);
  });
  after(() => d?.close());

  test('synchronous_commit=off: the campaign is sent once to everyone, the rows and stats say so', { skip: engine !== 'postgres' && 'options= is a PostgreSQL setting' }, async () => {
    d.writeConfig('notify.config.json', { ...d.defaults(), database: withOptions(d.database, '-c synchronous_commit=off') });
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    const id = (await d.cli(['campaigns:create', '--subject', 'Settings', '--text', 'Hello {{ contact.name }}', '--list', 'readers'])).trim().split('\n')[0];
    assert.match(await d.cli(['notify:send-campaign', id]), new RegExp(`campaign ${id}: sent 3, failed 0`));
    assert.deepEqual(d.sink.messages.map((m) => m.envelope.to[0]).sort(), ['ann@example.com', 'bob@example.com', 'cy@example.com']);
    const rows = await queryRows<{ status: string; n: number }>(d.database, 'select status, count(*) as n from notify_sends where campaign_id = ? group by status', [Number(id)]);
    assert.deepEqual(rows.map((r) => [r.status, Number(r.n)]), [['sent', 3]]);
    const stats = JSON.parse(await d.cli(['stats', id, '--json']));
    assert.deepEqual([stats.stats.total, stats.stats.sent, stats.stats.failed], [3, 3, 0]);
  });

  test('a setting PostgreSQL does not know: exit 1 naming it, nothing sent', { skip: engine !== 'postgres' && 'options= is a PostgreSQL setting' }, async () => {
    const before = d.sink.messages.length;
    d.writeConfig('notify.config.json', { ...d.defaults(), database: withOptions(d.database, '-c no_such_setting=1') });
    const r = await d.run(['campaigns:list']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /no_such_setting/);
    assert.doesNotMatch(r.stderr, /^\s+at /m, 'a message, not a stack trace');
    assert.equal(d.sink.messages.length, before);
  });
});
