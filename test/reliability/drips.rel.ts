import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ageDripClaims, assertStepsOnce, enrollmentStatuses, seedDrips } from './helpers/drips.ts';
import { NO_PG } from './helpers/pg.ts';
import { type CliEnv, waitUntil } from './helpers/processes.ts';
import { useCliRig } from './helpers/rig.ts';

/**
 * notify:process-drips as real processes on the real PostgreSQL, sending to a real SMTP sink in
 * this process: four at once over the same due enrollments, and one killed with SIGKILL mid-batch.
 */
describe('notify:process-drips across workers and crashes', { skip: NO_PG, timeout: 300_000 }, () => {
  const rig = useCliRig();

  /** runs notify:process-drips until a run finds nothing due; returns the runs' stdout lines */
  async function drain(cli: CliEnv, maxRuns = 40): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < maxRuns; i++) {
      const r = await cli.run(['notify:process-drips', '--json'], 120_000);
      assert.equal(r.code, 0, `exit code; stderr: ${r.stderr}`);
      // the last line is the run's JSON (log lines, e.g. the reclaim warning, come before it)
      const line = r.stdout.trim().split('\n').pop() ?? '';
      out.push(line);
      if (JSON.parse(line).claimed === 0) return out;
    }
    throw new Error(`still due after ${maxRuns} runs`);
  }

  test('4 processes at once over 2,000 due enrollments of a 2-step sequence: every step sent exactly once', async (t) => {
    const { emails } = await seedDrips(rig.db.url, 2000, 2);
    const cli = rig.cliFor({ batchSize: 500 });
    const started = Date.now();
    const runs = await Promise.all(Array.from({ length: 4 }, () => drain(cli)));
    const totals = runs.map((lines) => lines.reduce((n, l) => n + JSON.parse(l).sent, 0));
    t.diagnostic(`4 processes sent ${totals.join(' + ')} = ${totals.reduce((a, b) => a + b)} in ${Date.now() - started} ms`);
    assert.equal(rig.sink.messages.length, 4000, 'the rig.sink holds one message per step');
    assert.ok(totals.filter((n) => n > 0).length >= 2, 'the work was shared');
    const r = await assertStepsOnce(rig.db.url, emails, 2, rig.sink);
    assert.deepEqual(r, { sent: 4000, interrupted: 0 });
  });

  test('SIGKILL mid-batch: its claims stay until staleLockMinutes, then are reclaimed; no step is sent twice', async (t) => {
    const { emails } = await seedDrips(rig.db.url, 1200, 1);
    const cli = rig.cliFor({ batchSize: 1200, staleLockMinutes: 30 });
    const run = cli.start(['notify:process-drips']);
    await waitUntil(() => (rig.sink.messages.length >= 250 ? true : run.proc.exitCode !== null ? assert.fail(`exited early: ${run.stderr()}`) : undefined), 60_000, '250 messages in the rig.sink (mid-chunk: a kill just after the 100th of a chunk may find nothing claimed)');
    run.proc.kill('SIGKILL');
    await run.exited;
    const atKill = await enrollmentStatuses(rig.db.url);
    t.diagnostic(`killed with ${rig.sink.messages.length} delivered; enrollments ${JSON.stringify(atKill)}`);
    assert.ok((atKill.processing ?? 0) > 0, 'the killed run left claims');

    // a run now leaves the fresh claims alone and sends what nobody claimed
    await drain(cli);
    const held = await enrollmentStatuses(rig.db.url);
    assert.equal(held.processing, atKill.processing, 'claims younger than staleLockMinutes are not touched');

    // 31 minutes later (claims and in-flight rows aged): reclaimed; sent steps advance, in-flight ones are not resent
    const aged = await ageDripClaims(rig.db.url, 31);
    const after = await drain(cli);
    const first = JSON.parse(after[0]);
    t.diagnostic(`aged ${JSON.stringify(aged)}; first run after: ${after[0]}`);
    assert.equal(first.reclaimed, aged.claims);
    assert.equal(first.interrupted, aged.inFlight);
    const r = await assertStepsOnce(rig.db.url, emails, 1, rig.sink);
    t.diagnostic(`final: ${r.sent} sent, ${r.interrupted} interrupted (in flight at the kill), ${rig.sink.messages.length} messages`);
    assert.equal(r.interrupted, aged.inFlight);
  });

  test('notify worker: SIGTERM mid-batch finishes the chunk in hand, exits 0, leaves nothing claimed or in flight; a second worker finishes the rest', async (t) => {
    const { emails } = await seedDrips(rig.db.url, 1500, 1);
    const cli = rig.cliFor({ batchSize: 1500 });
    const worker = cli.start(['worker', '--interval', '0.2']);
    await waitUntil(() => (rig.sink.messages.length >= 200 ? true : worker.proc.exitCode !== null ? assert.fail(`exited early: ${worker.stderr()}`) : undefined), 60_000, '200 messages in the rig.sink');
    worker.proc.kill('SIGTERM');
    assert.equal(await worker.exited, 0, worker.stderr());
    const atStop = await enrollmentStatuses(rig.db.url);
    t.diagnostic(`stopped with ${rig.sink.messages.length} delivered; enrollments ${JSON.stringify(atStop)}`);
    assert.equal(atStop.processing, undefined, 'no claim left behind');
    assert.ok((atStop.active ?? 0) > 0, 'stopped before the end');
    assert.equal(rig.sink.messages.length, atStop.completed, 'every delivered step recorded');

    const second = cli.start(['worker', '--interval', '0.2']);
    await waitUntil(async () => ((await enrollmentStatuses(rig.db.url)).completed === emails.length ? true : undefined), 120_000, 'all completed');
    second.proc.kill('SIGINT');
    assert.equal(await second.exited, 0, second.stderr());
    assert.deepEqual(await assertStepsOnce(rig.db.url, emails, 1, rig.sink), { sent: emails.length, interrupted: 0 });
  });
});
