import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedSends } from '../../bench/lib/seed.ts';
import { createNotify } from '../../src/notify.ts';
import { startReceiver } from '../triggers/receiver.ts';
import { NO_PG } from './helpers/pg.ts';
import { waitUntil } from './helpers/processes.ts';
import { useCliRig } from './helpers/rig.ts';

const BATCHES = 30;
const PER_BATCH = 100;

/**
 * Opens reach the outbox as one row per tracking batch, written by two writers at once (their
 * ranges may overlap); four `notify worker` processes on one PostgreSQL expand those rows and
 * deliver: every stored open reaches the receiver, and none is acknowledged twice unless the
 * worker saw that try fail (the at-least-once rule), whichever worker expanded which batch.
 */
describe('tracking batches expanded and delivered by four workers', { skip: NO_PG, timeout: 300_000 }, () => {
  const rig = useCliRig();

  test(`${BATCHES} batches of ${PER_BATCH} opens: the set received equals the set stored, no open twice but for a failed try`, async (t) => {
    const acknowledged = new Map<string, number>();
    const receiver = await startReceiver((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: string };
      acknowledged.set(id, (acknowledged.get(id) ?? 0) + 1);
      setTimeout(() => res.writeHead(204).end(), Math.floor(Math.random() * 10));
    });
    t.after(() => receiver.close());
    const webhooksOut = [{ url: receiver.url, secret: 'rel-secret', events: ['notify:email.opened'] }];

    const { tokens } = await seedSends(rig.db.url, 500);
    const app = await createNotify({ database: rig.db.url, configFile: false, envFile: false, env: {}, logLevel: 'silent', mailer: 'log', webhooksOut });
    const label = () => ({ isMachine: false, reason: null });
    let at = Date.now();
    // two writers at once, as two serve processes would: their ranges may overlap
    await Promise.all(
      [0, 1].map(async (writer) => {
        for (let b = writer; b < BATCHES; b += 2) {
          const events = Array.from({ length: PER_BATCH }, (_, i) => ({ type: 'open' as const, token: tokens[(b * PER_BATCH + i) % tokens.length], at: ++at, link_index: null, metadata: {}, method: 'GET', userAgent: 'rel' }));
          await app.context.store.tracking.applyBatch(events, label);
        }
      }),
    );
    const stored = new Set((await app.context.store.db.selectFrom('notify_events').select('id').where('type', '=', 'open').execute()).map((r) => `evt_e${r.id}`));
    const batchRows = await app.context.store.db.selectFrom('notify_outbound_events').select('status').execute();
    await app.close();
    assert.equal(stored.size, BATCHES * PER_BATCH);
    assert.equal(batchRows.length, BATCHES, 'one outbox row per batch');

    const cli = rig.cliFor({ webhooksOut, logLevel: 'warn' });
    const workers = Array.from({ length: 4 }, () => cli.start(['worker', '--interval', '0.2']));
    await waitUntil(() => (acknowledged.size === stored.size ? true : undefined), 240_000, 'every open acknowledged').catch((err) =>
      assert.fail(`${err.message}: ${acknowledged.size} of ${stored.size}\n${workers.map((w) => w.stderr()).join('\n')}`),
    );
    for (const w of workers) w.proc.kill('SIGTERM');
    assert.deepEqual(await Promise.all(workers.map((w) => w.exited)), [0, 0, 0, 0]);
    // a try the worker saw fail (no answer within 5 s, a reset connection: this machine is shared)
    // may have reached the receiver: its retry is the at-least-once rule, not a second expansion
    const failedTries = new Set(
      workers
        .flatMap((w) => `${w.stdout()}\n${w.stderr()}`.split('\n'))
        .flatMap((line) => (line.includes('webhook delivery failed') ? [(JSON.parse(line) as { event: string }).event] : [])),
    );
    assert.deepEqual(new Set(acknowledged.keys()), stored, 'the ids received are the stored opens');
    const twice = [...acknowledged].filter(([, n]) => n > 1).map(([id]) => id);
    t.diagnostic(`${stored.size} opens; ${failedTries.size} had a failed try; ${twice.length} acknowledged twice`);
    assert.deepEqual(
      twice.filter((id) => !failedTries.has(id)),
      [],
      'no open acknowledged twice unless a try of it failed on the worker side',
    );
  });
});
