import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createNotify } from '../../src/notify.ts';
import { CliEnv, waitUntil } from '../reliability/helpers/processes.ts';

describe('notify notify:process-drips and notify worker', () => {
  const env = new CliEnv({ logLevel: 'silent' });
  writeFileSync(join(env.dir, 'notify.config.json'), JSON.stringify({ database: `sqlite:${join(env.dir, 'n.db')}`, mailer: `outbox:${join(env.dir, 'outbox')}`, fromEmail: 'news@example.com', logLevel: 'silent' }));
  after(() => env.cleanup());
  const open = () => createNotify({ configFile: join(env.dir, 'notify.config.json'), cwd: env.dir, env: {} });
  const outbox = () => readdirSync(join(env.dir, 'outbox')).filter((f) => f.endsWith('.eml')).length;

  test('process-drips sends what is due and says so; the worker sends what becomes due and exits 0 on SIGTERM', async () => {
    const notify = await open();
    await notify.drips.createSequence({ name: 'cli', steps: [{ delayMinutes: 0, subject: 'One', markdown: 'one' }] });
    for (const email of ['a@example.com', 'b@example.com']) {
      await notify.contacts.upsert({ email });
      await notify.drips.enroll({ contact: email, sequence: 'cli' });
    }
    await notify.close();
    const r = await env.run(['notify:process-drips']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /drips: sent 2, retried 0, failed 0 \(of 2 due\)/);
    assert.equal(outbox(), 2);
    const json = await env.run(['notify:process-drips', '--json']);
    assert.deepEqual(JSON.parse(json.stdout), { sent: 0, failed: 0, retried: 0, reclaimed: 0, claimed: 0, cancelled: 0, advanced: 0, interrupted: 0 });

    const worker = env.start(['worker', '--interval', '0.2']);
    try {
      await waitUntil(() => (/started/.test(worker.stdout()) ? true : undefined), 30_000, `worker start (${worker.stderr()})`);
      const later = await open();
      await later.contacts.upsert({ email: 'c@example.com' });
      await later.drips.enroll({ contact: 'c@example.com', sequence: 'cli' });
      const c = await later.campaigns.create({ subject: 'Camp', text: 'hello' });
      await later.context.store.campaigns.transition(c.id, ['draft'], 'sending', {}, Date.now());
      await later.close();
      await waitUntil(() => (outbox() === 2 + 1 + 3 ? true : undefined), 30_000, 'the drip step and the campaign from the worker');
      // the messages land before the run records them and prints its summary: wait for the line, then check the count stays
      await waitUntil(() => (/campaign \d+: sent 3/.test(worker.stdout()) ? true : undefined), 30_000, `the worker's campaign summary (${worker.stdout()})`);
      assert.match(worker.stdout(), /drips: sent 1/);
      assert.equal(outbox(), 2 + 1 + 3, 'nothing sent twice');
    } finally {
      worker.proc.kill('SIGTERM');
    }
    assert.equal(await worker.exited, 0, worker.stderr());
    assert.match(worker.stdout(), /SIGTERM received, finishing the batch in hand[\s\S]*stopped/);

    const bad = await env.run(['worker', '--interval', 'soon']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--interval must be a number of seconds/);
  });
});
