import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createContactsService } from '../../src/core/contacts.ts';
import { importContacts } from '../../src/core/import.ts';
import { createNotify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { ENGINES, freshDatabaseUrl, testOptions } from '../helpers/engines.ts';

const ROWS = Number(process.env.NOTIFY_TEST_IMPORT_ROWS) || 100_000;
const MB = 1024 * 1024;

// RSS moves by tens of MB with the collector's mood; the live heap after a full collection is what a
// streamed import must keep flat, so the test collects before each sample.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * A Mailchimp-shaped file written row by row, so the test itself holds no copy of it. `edit` changes
 * every row against the first file: another rating, one more tag, and an empty phone cell (which
 * must keep the stored phone).
 */
async function writeFile(path: string, edit = false): Promise<void> {
  const out = createWriteStream(path);
  const write = (s: string) => (out.write(s) ? undefined : once(out, 'drain'));
  await write('\uFEFFEmail Address,First Name,Last Name,Phone Number,MEMBER_RATING,OPTIN_TIME,NOTES,TAGS\r\n');
  for (let i = 0; i < ROWS; i++) {
    const phone = edit ? '' : `+1 555 ${String(i).padStart(7, '0')}`;
    const tags = edit ? `"""tag${i % 10}"",""all"",""more"""` : `"""tag${i % 10}"",""all"""`;
    await write(`user${i}@example.com,First${i},"Last, ${i}",${phone},${(i % 5) + (edit ? 1 : 0)},2024-01-01 00:00:00,"note ""${i}""\nline two",${tags}\r\n`);
  }
  out.end();
  await once(out, 'finish');
}

for (const engine of ENGINES) {
  test(`[${engine}] importing ${ROWS} rows streams with memory flat; the same people again with changes are updated in batches`, { timeout: 60 * 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-import-100k-'));
    const db = engine === 'sqlite' ? { url: `sqlite:${join(dir, 'notify.db')}` } : freshDatabaseUrl(engine);
    after(async () => {
      if (engine === 'postgres') await createStore(db.url).dialect.destroyData();
      rmSync(dir, { recursive: true, force: true });
    });
    const file = join(dir, 'subscribed_members_export.csv');
    await writeFile(file);
    const notify = await createNotify(testOptions(db.url));
    after(() => notify.close());
    const samples: { rows: number; rss: number; heap: number }[] = [];
    let started = Date.now();
    const res = await importContacts(createContactsService(notify.context), createReadStream(file), {
      onProgress: (p) => {
        if (p.rows % 10_000 !== 0) return;
        gc();
        const m = process.memoryUsage();
        samples.push({ rows: p.rows, rss: m.rss / MB, heap: m.heapUsed / MB });
      },
    });
    let seconds = (Date.now() - started) / 1000;
    console.log(`[${engine}] file ${(statSync(file).size / MB).toFixed(1)} MB, ${ROWS} new rows in ${seconds.toFixed(1)} s (${Math.round(ROWS / seconds)} rows/s)`);
    console.log(`[${engine}] live heap / RSS by rows: ${samples.map((s) => `${s.rows}: ${s.heap.toFixed(0)} / ${s.rss.toFixed(0)} MB`).join(', ')}`);
    assert.deepEqual([res.created, res.rejected.length], [ROWS, 0]);
    assert.deepEqual((await notify.contacts.get(`user${ROWS - 1}@example.com`))?.lists, ['all', 'tag9']);
    // flat: after a full collection the last 80% of the file adds less than 10 MB of live heap (the
    // 12 MB file held as strings and rows would add several times its size)
    if (samples.length > 2) {
      const at20 = samples[1].heap;
      const peak = Math.max(...samples.map((s) => s.heap));
      assert.ok(peak - at20 < 10, `live heap grew from ${at20.toFixed(1)} MB at 20,000 rows to ${peak.toFixed(1)} MB`);
    }

    const edited = join(dir, 'edited.csv');
    await writeFile(edited, true);
    started = Date.now();
    const again = await importContacts(createContactsService(notify.context), createReadStream(edited));
    seconds = (Date.now() - started) / 1000;
    console.log(`[${engine}] ${ROWS} changed rows in ${seconds.toFixed(1)} s (${Math.round(ROWS / seconds)} rows/s)`);
    assert.deepEqual([again.created, again.updated, again.unchanged, again.rejected.length], [0, ROWS, 0, 0]);
    const last = (await notify.contacts.get(`user${ROWS - 1}@example.com`))!;
    assert.deepEqual(last.lists, ['all', 'more', 'tag9']);
    assert.equal(last.attributes.member_rating, String(((ROWS - 1) % 5) + 1));
    assert.equal(last.attributes.phone_number, `+1 555 ${String(ROWS - 1).padStart(7, '0')}`, 'an empty cell kept the stored value');
  });
}
