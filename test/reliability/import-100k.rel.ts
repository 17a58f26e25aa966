import assert from 'node:assert/strict';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { once } from 'node:events';
import { after, test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import { importContacts } from '../../src/core/import.ts';
import { createNotify } from '../../src/notify.ts';
import { testOptions } from '../helpers/engines.ts';

const ROWS = Number(process.env.NOTIFY_TEST_IMPORT_ROWS) || 100_000;
const MB = 1024 * 1024;

// RSS moves by tens of MB with the collector's mood; the live heap after a full collection is what a
// streamed import must keep flat, so the test collects before each sample.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** A Mailchimp-shaped file written row by row, so the test itself holds no copy of it. */
async function writeFile(path: string): Promise<void> {
  const out = createWriteStream(path);
  const write = (s: string) => (out.write(s) ? undefined : once(out, 'drain'));
  await write('\uFEFFEmail Address,First Name,Last Name,Phone Number,MEMBER_RATING,OPTIN_TIME,NOTES,TAGS\r\n');
  for (let i = 0; i < ROWS; i++) {
    await write(`user${i}@example.com,First${i},"Last, ${i}",+1 555 ${String(i).padStart(7, '0')},${i % 5},2024-01-01 00:00:00,"note ""${i}""\nline two","""tag${i % 10}"",""all"""\r\n`);
  }
  out.end();
  await once(out, 'finish');
}

test(`importing ${ROWS} rows streams: memory stays flat`, { timeout: 20 * 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-import-100k-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'subscribed_members_export.csv');
  await writeFile(file);
  const notify = await createNotify(testOptions(`sqlite:${join(dir, 'notify.db')}`));
  after(() => notify.close());
  const samples: { rows: number; rss: number; heap: number }[] = [];
  const started = Date.now();
  const res = await importContacts(createContactsService(notify.context), createReadStream(file), {
    onProgress: (p) => {
      if (p.rows % 10_000 !== 0) return;
      gc();
      const m = process.memoryUsage();
      samples.push({ rows: p.rows, rss: m.rss / MB, heap: m.heapUsed / MB });
    },
  });
  const seconds = (Date.now() - started) / 1000;
  console.log(`file ${(statSync(file).size / MB).toFixed(1)} MB, ${ROWS} rows in ${seconds.toFixed(1)} s (${Math.round(ROWS / seconds)} rows/s)`);
  console.log(`live heap / RSS by rows: ${samples.map((s) => `${s.rows}: ${s.heap.toFixed(0)} / ${s.rss.toFixed(0)} MB`).join(', ')}`);
  assert.deepEqual([res.created, res.rejected.length], [ROWS, 0]);
  assert.deepEqual((await notify.contacts.get(`user${ROWS - 1}@example.com`))?.lists, ['all', 'tag9']);
  // flat: after a full collection the last 80% of the file adds less than 10 MB of live heap (the
  // 12 MB file held as strings and rows would add several times its size)
  const at20 = samples[1].heap;
  const peak = Math.max(...samples.map((s) => s.heap));
  assert.ok(peak - at20 < 10, `live heap grew from ${at20.toFixed(1)} MB at 20,000 rows to ${peak.toFixed(1)} MB`);
});
