// A deployment configured by the working folder's .env file, run through /bin/sh -c as npm scripts
// and npx run commands (Debian's dash drops environment names with a dot, so a file is the way
// `notify.<option>` names reach notify there): first .env alone, then under it a notify.config.json
// and over it the real environment, then a file named by --env-file in its place. One campaign is
// sent a batch per source, so each email shows which source set its sender and its links.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { SinkMessage } from '../helpers/smtp-sink.ts';
import { contactStatus, queryRows } from './database.ts';
import { Deployment, describeEachEngine } from './harness.ts';
import { delivered, listUnsubscribeUrl, pixelUrl, recipient, trackedLinks } from './mail.ts';

const TRACKING_HOST = 'https://track.example.com';
const CONFIG_TRACKING_HOST = 'https://config-track.example.com';
const PEOPLE = ['uma@example.com', 'vic@example.com', 'wes@example.com', 'yan@example.com'];

/** The sender a mail client shows, and the host of every tracked URL in the email. */
const shown = (mail: SinkMessage) => ({
  from: mail.parsed.from?.value.map(({ name, address }) => ({ name, address })),
  hosts: [...new Set([pixelUrl(mail), listUnsubscribeUrl(mail), ...trackedLinks(mail).map((l) => l.href)].map((u) => new URL(u).origin))],
});

const envFile = (d: Deployment, typo = false) =>
  [
    '# notify settings for this folder',
    `NOTIFY_DATABASE=${d.database}`,
    `NOTIFY_MAILER="${d.sink.url}"`,
    "notify.fromEmail = 'news@example.com'   # the sender",
    typo ? 'NOTIFY_BATCH_SIZ=1' : 'NOTIFY_BATCH_SIZE=1',
    `notify.trackingHost = ${TRACKING_HOST}`,
    'NOTIFY_LOG_LEVEL=warn',
    '',
  ].join('\n');

describeEachEngine('.env, notify.config.json, the environment and --env-file, commands run through /bin/sh', (engine) => {
  let d: Deployment;
  let id = '';
  /** the emails of the campaign that reached the sink after the first `seen` */
  const since = (seen: number) => d.sink.messages.slice(seen);
  before(async () => {
    d = await Deployment.open(engine, { config: false });
    d.writeFile('.env', envFile(d));
    d.writeFile('people.csv', `email,name\n${PEOPLE.map((e) => `${e},${e.split('@')[0]}`).join('\n')}\n`);
  });
  after(() => d?.close());

  test('.env alone sets the database, mailer, sender, batchSize and trackingHost', async () => {
    assert.match(await d.cli(['contacts:import', 'people.csv'], { shell: true }), /created 4, updated 0, unchanged 0, rejected 0/);
    const status = await contactStatus(d.database, 'uma@example.com').catch((err) => `unreadable (${err.message})`);
    assert.equal(status, 'subscribed', 'the contacts are in the database .env names');
    id = (await d.cli(['campaigns:create', '--subject', 'Hello from .env', '--html', '<p><a href="https://example.org/welcome">Welcome</a></p>'], { shell: true })).trim().split('\n')[0];

    assert.match(await d.cli(['notify:send-campaign', id], { shell: true }), /sent 1, failed 0, suppressed 0, 3 remaining/, 'batchSize 1 from .env');
    const [mail] = await delivered(d.sink, () => true, 1);
    assert.deepEqual(shown(mail), { from: [{ name: '', address: 'news@example.com' }], hosts: [TRACKING_HOST] });
    assert.equal(mail.envelope.from, 'news@example.com');
  });

  test('notify.config.json fills what .env leaves out, .env wins over it, and the real environment wins over both', async () => {
    assert.ok(id, 'the campaign of the first test exists');
    d.writeConfig('notify.config.json', { fromName: 'Config Shop', fromEmail: 'config@example.com', trackingHost: CONFIG_TRACKING_HOST, batchSize: '3' });
    const seen = d.sink.messages.length;
    const out = await d.cli(['notify:send-campaign', id], { shell: true, env: { NOTIFY_BATCH_SIZE: '2' } });
    assert.match(out, /sent 2, failed 0, suppressed 0, 1 remaining/, 'NOTIFY_BATCH_SIZE=2 of the environment over batchSize 1 of .env and 3 of the config file');
    await delivered(d.sink, () => true, seen + 2);
    // fromName only in the config file; fromEmail and trackingHost in both, .env's win.
    assert.deepEqual(since(seen).map(shown), [0, 1].map(() => ({ from: [{ name: 'Config Shop', address: 'news@example.com' }], hosts: [TRACKING_HOST] })));
  });

  test('--env-file <f> is read in place of .env, over the config file; a missing one stops the command before it sends', async () => {
    assert.ok(id, 'the campaign of the first test exists');
    const seen = d.sink.messages.length;
    const missing = await d.run(['--env-file', 'missing.env', 'notify:send-campaign', id], { shell: true });
    assert.notEqual(missing.code, 0, missing.stderr);
    assert.match(missing.stderr, /missing\.env/);
    // the file is named and not there: no .env read in its place, nothing sent
    d.writeFile('production.env', [`NOTIFY_DATABASE=${d.database}`, `NOTIFY_MAILER=${d.sink.url}`, 'notify.fromEmail=prod@example.com', ''].join('\n'));
    const out = await d.cli(['--env-file', 'production.env', 'notify:send-campaign', id], { shell: true });
    assert.match(out, /sent 1, failed 0, suppressed 0 - campaign sent, nothing remains/);
    await delivered(d.sink, () => true, seen + 1);
    assert.equal(d.sink.messages.length, seen + 1, 'the failed run sent nothing');
    // fromEmail from the named file; trackingHost from the config file, as .env (which sets it) is not read.
    assert.deepEqual(since(seen).map(shown), [{ from: [{ name: 'Config Shop', address: 'prod@example.com' }], hosts: [CONFIG_TRACKING_HOST] }]);
    assert.deepEqual((await delivered(d.sink, () => true, 4)).map(recipient).sort(), PEOPLE);
  });

  test('a NOTIFY_ name in .env that is no option is an error naming it, and the command does nothing', async () => {
    d.writeFile('.env', envFile(d, true));
    d.writeFile('more.csv', 'email\nxan@example.com\n');
    const r = await d.run(['contacts:import', 'more.csv'], { shell: true });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /NOTIFY_BATCH_SIZ\b/);
    const rows = await queryRows(d.database, 'select email from notify_contacts where email = ?', ['xan@example.com']);
    assert.deepEqual(rows, []);
  });
});
