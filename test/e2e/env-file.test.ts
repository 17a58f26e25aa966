// A deployment configured by nothing but the working folder's .env file, run through /bin/sh -c as
// npm scripts and npx run commands (Debian's dash drops environment names with a dot, so a file is
// the way `notify.<option>` names reach notify there).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../helpers/engines.ts';
import { contactStatus, queryRows } from './database.ts';
import { Deployment } from './harness.ts';
import { delivered, listUnsubscribeUrl, pixelUrl, recipient, trackedLinks } from './mail.ts';

const TRACKING_HOST = 'https://track.example.com';

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

for (const engine of ENGINES) {
  describe(`a .env-only configuration, commands run through /bin/sh [${engine}]`, () => {
    let d: Deployment;
    before(async () => {
      d = await Deployment.open(engine, { config: false });
      d.writeFile('.env', envFile(d));
      d.writeFile('people.csv', 'email,name\numa@example.com,Uma\nvic@example.com,Vic\nwes@example.com,Wes\n');
    });
    after(() => d?.close());

    test('.env sets the database, mailer, sender, batchSize and trackingHost; the real environment overrides it', async () => {
      assert.match(await d.cli(['contacts:import', 'people.csv'], { shell: true }), /created 3, updated 0, unchanged 0, rejected 0/);
      const status = await contactStatus(d.database, 'uma@example.com').catch((err) => `unreadable (${err.message})`);
      assert.equal(status, 'subscribed', 'the contacts are in the database .env names');
      const id = (await d.cli(['campaigns:create', '--subject', 'Hello from .env', '--html', '<p><a href="https://example.org/welcome">Welcome</a></p>'], { shell: true })).trim().split('\n')[0];

      assert.match(await d.cli(['notify:send-campaign', id], { shell: true }), /sent 1, failed 0, suppressed 0, 2 remaining/, 'batchSize 1 from .env');
      const [mail] = await delivered(d.sink, () => true, 1);
      for (const url of [pixelUrl(mail), listUnsubscribeUrl(mail), ...trackedLinks(mail).map((l) => l.href)]) {
        assert.ok(url.startsWith(`${TRACKING_HOST}/notify/`), `${url} is on the trackingHost from .env`);
      }
      assert.equal(mail.envelope.from, 'news@example.com');

      const rest = await d.cli(['notify:send-campaign', id], { shell: true, env: { NOTIFY_BATCH_SIZE: '2' } });
      assert.match(rest, /sent 2, failed 0, suppressed 0 - campaign sent, nothing remains/, 'NOTIFY_BATCH_SIZE of the real environment wins over .env');
      assert.deepEqual((await delivered(d.sink, () => true, 3)).map(recipient).sort(), ['uma@example.com', 'vic@example.com', 'wes@example.com']);
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
}
