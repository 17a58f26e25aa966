import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createContactsService } from '../../src/core/contacts.ts';
import { createNotify } from '../../src/notify.ts';
import { startReceiver } from '../triggers/receiver.ts';
import { NO_PG } from './helpers/pg.ts';
import { waitUntil } from './helpers/processes.ts';
import { useCliRig } from './helpers/rig.ts';

const EVENTS = 2000;

/**
 * Outgoing webhooks from four `notify worker` processes on one PostgreSQL: every event reaches the
 * receiver, and none is acknowledged (2xx) twice. Every seventh request fails with 500 when it is an
 * event's first, so retries are part of the run.
 */
describe('webhooksOut across four workers', { skip: NO_PG, timeout: 300_000 }, () => {
  const rig = useCliRig();

  test(`4 workers deliver ${EVENTS} events: the set received equals the set written, no id acknowledged twice`, async (t) => {
    const acknowledged = new Map<string, number>();
    const refused = new Set<string>();
    let requests = 0;
    const receiver = await startReceiver((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: string };
      requests++;
      // a first try only: a second failure would wait the next backoff step (30 s), a third a minute
      if (requests % 7 === 0 && !refused.has(id) && !acknowledged.has(id)) {
        refused.add(id);
        return void res.writeHead(500).end('try later');
      }
      acknowledged.set(id, (acknowledged.get(id) ?? 0) + 1);
      setTimeout(() => res.writeHead(204).end(), Math.floor(Math.random() * 20));
    });
    t.after(() => receiver.close());
    const webhooksOut = [{ url: receiver.url, secret: 'rel-secret', events: ['notify:contact.subscribed'] }];

    const app = await createNotify({ database: rig.db.url, configFile: false, envFile: false, env: {}, logLevel: 'silent', mailer: 'log', webhooksOut });
    const contacts = createContactsService(app.context);
    for (let i = 0; i < EVENTS; i += 500) {
      await contacts.upsertMany(Array.from({ length: 500 }, (_, j) => ({ input: { email: `r${i + j}@example.com`, lists: ['news'] } })));
    }
    const written = new Set((await app.context.store.db.selectFrom('notify_outbound_events').select('event_id').execute()).map((r) => r.event_id));
    await app.close();
    assert.equal(written.size, EVENTS);

    // the backoff after a 500 is 10 s; a worker round every 0.2 s picks the retries up when due
    const cli = rig.cliFor({ webhooksOut, logLevel: 'error' });
    const started = Date.now();
    const workers = Array.from({ length: 4 }, () => cli.start(['worker', '--interval', '0.2']));
    await waitUntil(() => (acknowledged.size === EVENTS ? true : undefined), 240_000, 'every event acknowledged').catch((err) =>
      assert.fail(`${err.message}: ${acknowledged.size} of ${EVENTS}\n${workers.map((w) => w.stderr()).join('\n')}`),
    );
    const took = Date.now() - started;
    for (const w of workers) w.proc.kill('SIGTERM');
    const codes = await Promise.all(workers.map((w) => w.exited));
    assert.deepEqual(codes, [0, 0, 0, 0]);
    const perWorker = workers.map((w) => [...w.stdout().matchAll(/webhooks: (\d+) delivered/g)].reduce((n, m) => n + Number(m[1]), 0));
    t.diagnostic(`${EVENTS} events, ${requests} requests (${requests - EVENTS} retries) in ${took} ms; per worker ${perWorker.join(' + ')} (machine shared with other work)`);
    assert.deepEqual(new Set(acknowledged.keys()), written, 'the ids received are the ids written');
    const twice = [...acknowledged].filter(([, n]) => n > 1);
    assert.deepEqual(twice, [], 'no event acknowledged twice');
    assert.ok(perWorker.filter((n) => n > 0).length >= 2, 'the work was shared');
    assert.equal(perWorker.reduce((a, b) => a + b), EVENTS);
  });
});
