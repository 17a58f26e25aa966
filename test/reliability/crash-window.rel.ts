import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dropDatabase } from '../e2e/database.ts';
import { ENGINES, freshDatabaseUrl } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { ageSendingRows, assertExactlyOnceOrFailed, campaignStatus, seedCampaign, sendStatuses } from './helpers/campaign.ts';
import { CliEnv, waitUntil } from './helpers/processes.ts';

const PEOPLE = 1500;
const KILLS = 5;
/** the delivery pool: sends in flight at once, all a crash may leave in doubt */
const POOL = 5;

/**
 * notify:send-campaign as a real process on each engine, sending one campaign to a real SMTP sink,
 * killed with SIGKILL at five random moments (after a random number of deliveries), then rerun to
 * the end. After each kill at most the pool's sends are `sending` (in doubt); afterwards nobody got
 * the campaign twice and everyone has exactly one message or one recorded failure.
 */
for (const engine of ENGINES) {
  describe(`kill -9 at random moments leaves at most the pool in doubt [${engine}]`, { timeout: 600_000 }, () => {
    let sink: SmtpSink;
    let db: ReturnType<typeof freshDatabaseUrl>;
    let cli: CliEnv;
    before(async () => {
      sink = await startSmtpSink({ parse: false });
      db = freshDatabaseUrl(engine);
      cli = new CliEnv({ database: db.url, mailer: sink.url, fromEmail: 'news@example.com', baseUrl: 'http://127.0.0.1', batchSize: 100_000 });
    });
    after(async () => {
      cli.cleanup();
      await sink.close();
      await dropDatabase(db.url, db.cleanup);
    });

    test(`${KILLS} kills mid-run, then reruns: <= ${POOL} in doubt after each, nobody twice, everyone once or failed`, async (t) => {
      const { campaignId, emails } = await seedCampaign(db.url, PEOPLE);
      let inDoubt = 0;
      for (let k = 1; k <= KILLS; k++) {
        const before = sink.messages.length;
        // a random moment: after 1 to 200 more deliveries (the process's start-up time varies too)
        const target = before + 1 + Math.floor(Math.random() * 200);
        const run = cli.start(['notify:send-campaign', String(campaignId)]);
        const why = await waitUntil(() => (sink.messages.length >= target ? 'reached' : run.proc.exitCode !== null ? `exited ${run.proc.exitCode}: ${run.stderr()}` : undefined), 120_000, `${target} messages`);
        assert.equal(why, 'reached');
        run.proc.kill('SIGKILL');
        await run.exited;
        const rows = await sendStatuses(db.url, campaignId);
        t.diagnostic(`kill ${k} after ${sink.messages.length - before} deliveries (target ${target - before}): rows ${JSON.stringify(rows)}; ${sink.messages.length} in the sink`);
        assert.ok((rows.sending ?? 0) <= POOL, `kill ${k}: ${rows.sending} rows in doubt, at most ${POOL}`);
        inDoubt += rows.sending ?? 0;
        // as if staleLockMinutes had passed: the next run settles what the killed one left
        await ageSendingRows(db.url, campaignId, 31);
      }
      for (let i = 0; i < 10 && (await campaignStatus(db.url, campaignId)) !== 'sent'; i++) {
        const r = await cli.run(['notify:send-campaign', String(campaignId)], 240_000);
        assert.equal(r.code, 0, r.stderr);
      }
      assert.equal(await campaignStatus(db.url, campaignId), 'sent');
      const final = await sendStatuses(db.url, campaignId);
      const r = await assertExactlyOnceOrFailed(db.url, campaignId, emails, sink);
      t.diagnostic(`${inDoubt} in doubt over ${KILLS} kills; rows at the end ${JSON.stringify(final)}; ${r.delivered} recipients got it`);
      assert.equal(r.failed, inDoubt, 'exactly the rows in doubt at the kills are failed (interrupted); nothing else failed');
      assert.ok(r.delivered >= r.sent, 'every sent row was delivered');
    });
  });
}
