import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ageSendingRows, assertExactlyOnceOrFailed, campaignStatus, seedCampaign, sendStatuses } from './helpers/campaign.ts';
import { NO_PG, viaPort } from './helpers/pg.ts';
import { type CliEnv, waitUntil } from './helpers/processes.ts';
import { useCliRig } from './helpers/rig.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';

/**
 * notify:send-campaign as real processes on the real PostgreSQL, sending to a real SMTP sink in
 * this process: killed mid-batch, eight at once, and with the database taken away mid-run.
 */
describe('notify:send-campaign under crashes, concurrency and a lost database', { skip: NO_PG, timeout: 240_000 }, () => {
  const rig = useCliRig();

  /** runs the command until the campaign is marked sent (each run sends at most batchSize) */
  async function runUntilSent(cli: CliEnv, campaignId: number, maxRuns = 20) {
    for (let i = 0; i < maxRuns; i++) {
      const r = await cli.run(['notify:send-campaign', String(campaignId)], 120_000);
      assert.equal(r.code, 0, `run ${i + 1} exit code; stderr: ${r.stderr}`);
      if ((await campaignStatus(rig.db.url, campaignId)) === 'sent') return i + 1;
    }
    throw new Error(`campaign not sent after ${maxRuns} runs`);
  }

  async function killedMidBatch(cli: CliEnv, campaignId: number, then: () => Promise<void>) {
    const run = cli.start(['notify:send-campaign', String(campaignId)]);
    const started = await waitUntil(() => (rig.sink.messages.length >= 300 ? 'sending' : run.proc.exitCode !== null ? `exited ${run.proc.exitCode}: ${run.stderr()}` : undefined), 60_000, '300 messages in the rig.sink');
    assert.equal(started, 'sending');
    await then();
    return run;
  }

  test('kill -9 mid-batch, then reruns: every contact has exactly one message or one recorded failure', async (t) => {
    const { campaignId, emails } = await seedCampaign(rig.db.url, 1200);
    const cli = rig.cliFor({ batchSize: 1200 });
    const run = await killedMidBatch(cli, campaignId, async () => {});
    run.proc.kill('SIGKILL');
    await run.exited;
    const atKill = rig.sink.messages.length;
    const atKillRows = await sendStatuses(rig.db.url, campaignId);
    t.diagnostic(`killed with ${atKill} delivered; rows ${JSON.stringify(atKillRows)}`);

    // Rows the killed run left `sending` are neither resent nor forgotten: once stale they become
    // failed. Those it left `queued` were never handed to the mailer: once stale a rerun sends them.
    await ageSendingRows(rig.db.url, campaignId, 31);
    await runUntilSent(cli, campaignId);
    const final = await sendStatuses(rig.db.url, campaignId);
    t.diagnostic(`${atKillRows.sending ?? 0} rows were in flight at the kill; rows after reruns ${JSON.stringify(final)}`);
    const r = await assertExactlyOnceOrFailed(rig.db.url, campaignId, emails, rig.sink);
    assert.equal(r.failed, atKillRows.sending ?? 0, 'exactly the in-flight rows are failed (interrupted)');
  });

  test('8 concurrent send-campaign processes on one PostgreSQL: zero duplicates, everyone once', async (t) => {
    const { campaignId, emails } = await seedCampaign(rig.db.url, 1600);
    const cli = rig.cliFor({ batchSize: 250 });
    const started = Date.now();
    const runs = await Promise.all(Array.from({ length: 8 }, () => cli.run(['notify:send-campaign', String(campaignId)], 120_000)));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    if ((await campaignStatus(rig.db.url, campaignId)) !== 'sent') await runUntilSent(cli, campaignId);
    t.diagnostic(`8 processes x batchSize 250 sent 1600 in ${Date.now() - started} ms`);
    const r = await assertExactlyOnceOrFailed(rig.db.url, campaignId, emails, rig.sink);
    assert.equal(r.sent, emails.length, 'all sent');
    assert.equal(rig.sink.messages.length, emails.length, 'one message each');
  });

  test('PostgreSQL lost mid-run: a clear error, no corrupt state, and the rerun finishes the job', async (t) => {
    const { campaignId, emails } = await seedCampaign(rig.db.url, 1200);
    const target = new URL(rig.db.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      const cli = rig.cliFor({ batchSize: 1200 }, viaPort(rig.db.url, proxy.port));
      const run = await killedMidBatch(cli, campaignId, () => proxy.cut());
      const timer = setTimeout(() => run.proc.kill('SIGKILL'), 60_000);
      const code = await run.exited;
      clearTimeout(timer);
      t.diagnostic(`exit ${code}; stderr: ${run.stderr().trim().slice(0, 500)}`);
      assert.notEqual(code, -1, 'the run ended by itself (did not hang on the lost database)');
      assert.equal(code, 1, 'the run reports failure');
      assert.match(run.stderr(), /STORE_UNAVAILABLE|database is unavailable/i, 'the error says the database is unavailable');
      assert.doesNotMatch(run.stderr(), /^\s+at /m, 'no stack trace as the message');

      // the same command while the database is still away fails the same clear way, quickly
      const down = await cli.run(['notify:send-campaign', String(campaignId)], 60_000);
      assert.equal(down.code, 1);
      assert.match(down.stderr, /STORE_UNAVAILABLE|database is unavailable/i);

      await proxy.restore();
      await ageSendingRows(rig.db.url, campaignId, 31);
      await runUntilSent(cli, campaignId);
      const r = await assertExactlyOnceOrFailed(rig.db.url, campaignId, emails, rig.sink);
      t.diagnostic(`after restore: ${r.sent} sent, ${r.failed} failed (in flight when the database went away)`);
    } finally {
      await proxy.close();
    }
  });
});
