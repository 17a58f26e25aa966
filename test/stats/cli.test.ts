import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { createNotify } from '../../src/notify.ts';
import { cliEntry } from '../helpers/compiled-entry.ts';
import { testOptions } from '../helpers/engines.ts';

const run = promisify(execFile);
const T0 = Date.UTC(2026, 0, 1, 9, 0);

test('notify stats <id> prints the figures; --json prints the report; bad ids fail clearly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-stats-cli-'));
  const database = `sqlite:${join(dir, 'n.db')}`;
  const notify = await createNotify(testOptions(database));
  const camp = await notify.context.store.db.insertInto('notify_campaigns').values({ name: 'Launch', subject: 'We launched', status: 'sent', created_at: T0 }).returning('id').executeTakeFirstOrThrow();
  const id = Number(camp.id);
  await notify.context.store.counters.add(new Map([[id, { total: 1200, sent: 1000, failed: 2, suppressed: 198, opened: 400, human_opened: 150, clicked: 80, human_clicked: 60, unsubscribed: 3 }]]));
  await notify.context.store.links.ensureScope(`c${id}`, ['https://example.com/launch'], T0);
  await notify.context.store.events.insertMany([
    { type: 'click', send_id: null, contact_id: null, campaign_id: id, link_index: 0, is_machine: 1, machine_reason: 'scanner-fast-click', created_at: T0 },
  ]);
  await notify.close();
  writeFileSync(join(dir, 'notify.config.json'), JSON.stringify({ database, logLevel: 'silent' }));
  // the config file in the working folder, not the caller's NOTIFY_* environment, decides
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^notify[._]/i.test(k)));
  const opts = { cwd: dir, env };

  const text = (await run(process.execPath, [cliEntry(), 'stats', String(id)], opts)).stdout;
  assert.match(text, /^Campaign \d+: Launch \(sent\)/);
  assert.match(text, /total\s+1,200 {2}send records/);
  assert.match(text, /opened\s+400 {2}40\.0% of sent; human 150 \(15\.0%\)/);
  assert.match(text, /clicked\s+80 {2}8\.0% of sent; human 60 \(6\.0%\)/);
  assert.match(text, /click {2}scanner-fast-click\s+1/);
  assert.match(text, /#0 https:\/\/example\.com\/launch {2}1 \/ 0 \/ 0/);

  const json = JSON.parse((await run(process.execPath, [cliEntry(), 'stats', String(id), '--json'], opts)).stdout);
  assert.deepEqual(json.stats, { total: 1200, sent: 1000, failed: 2, opened: 400, clicked: 80 });
  assert.deepEqual(json.human, { opened: 150, clicked: 60 });
  assert.equal(json.unsubscribed, 3);

  for (const [arg, message] of [
    ['424242', /Campaign 424242 does not exist \[NOT_FOUND\]/],
    ['1;drop', /positive whole number .*\[INVALID_INPUT\]/],
  ] as const) {
    const err = await run(process.execPath, [cliEntry(), 'stats', arg], opts).then(
      () => assert.fail('should fail'),
      (e) => e,
    );
    assert.equal(err.code, 1);
    assert.match(err.stderr, message);
  }
});
