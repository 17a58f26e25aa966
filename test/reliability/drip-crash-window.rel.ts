import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dropDatabase } from '../e2e/database.ts';
import { ENGINES, freshDatabaseUrl } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { ageDripClaims, assertStepsOnce, enrollmentStatuses, seedDrips, stepStatuses } from './helpers/drips.ts';
import { CliEnv, waitUntil } from './helpers/processes.ts';

const PEOPLE = 1500;
const KILLS = 5;
/** the delivery pool: steps in flight at once, all a crash may leave in doubt */
const POOL = 5;

/**
 * notify:process-drips as a real process on each engine, sending the one step of a sequence that
 * is due for every enrollment to a real SMTP sink, killed with SIGKILL at five random moments
 * (after a random number of deliveries), then rerun to the end. After each kill at most the pool's
 * steps are `sending` (in doubt); afterwards nobody got the step twice and every enrollment has
 * exactly one message or one recorded failure (interrupted), and is completed.
 */
for (const engine of ENGINES) {
  describe(`kill -9 of notify:process-drips at random moments leaves at most the pool in doubt [${engine}]`, { timeout: 600_000 }, () => {
    let sink: SmtpSink;
    let db: ReturnType<typeof freshDatabaseUrl>;
    let cli: CliEnv;
    before(async () => {
      sink = await startSmtpSink({ parse: false });
      db = freshDatabaseUrl(engine);
      cli = new CliEnv({ database: db.url, mailer: sink.url, fromEmail: 'news@example.com', baseUrl: 'http://127.0.0.1', batchSize: 100_000, staleLockMinutes: 30 });
    });
    after(async () => {
      cli.cleanup();
      await sink.close();
      await dropDatabase(db.url, db.cleanup);
    });

    test(`${KILLS} kills mid-run, then reruns: <= ${POOL} in doubt after each, nobody twice, everyone once or failed`, async (t) => {
      const { emails } = await seedDrips(db.url, PEOPLE, 1);
      let inDoubt = 0;
      for (let k = 1; k <= KILLS; k++) {
        const before = sink.messages.length;
        // a random moment: after 1 to 200 more deliveries (the process's start-up time varies too)
        const target = before + 1 + Math.floor(Math.random() * 200);
        const run = cli.start(['notify:process-drips']);
        const why = await waitUntil(() => (sink.messages.length >= target ? 'reached' : run.proc.exitCode !== null ? `exited ${run.proc.exitCode}: ${run.stderr()}` : undefined), 120_000, `${target} messages`);
        assert.equal(why, 'reached');
        run.proc.kill('SIGKILL');
        await run.exited;
        const rows = await stepStatuses(db.url);
        t.diagnostic(`kill ${k} after ${sink.messages.length - before} deliveries (target ${target - before}): step rows ${JSON.stringify(rows)}; enrollments ${JSON.stringify(await enrollmentStatuses(db.url))}; ${sink.messages.length} in the sink`);
        assert.ok((rows.sending ?? 0) <= POOL, `kill ${k}: ${rows.sending} steps in doubt, at most ${POOL}`);
        inDoubt += rows.sending ?? 0;
        // as if staleLockMinutes had passed: the next run takes back the killed one's claims and settles its steps
        await ageDripClaims(db.url, 31);
      }
      for (let i = 0; i < 20; i++) {
        const r = await cli.run(['notify:process-drips', '--json'], 240_000);
        assert.equal(r.code, 0, r.stderr);
        if (JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}').claimed === 0) break;
      }
      const final = await stepStatuses(db.url);
      const r = await assertStepsOnce(db.url, emails, 1, sink);
      t.diagnostic(`${inDoubt} in doubt over ${KILLS} kills; step rows at the end ${JSON.stringify(final)}; ${sink.messages.length} messages`);
      assert.equal(r.interrupted, inDoubt, 'exactly the steps in doubt at the kills are failed (interrupted); nothing else failed');
      assert.equal(r.sent, emails.length - inDoubt);
      // a step in doubt may have reached the server before the kill: delivered, yet recorded failed
      assert.ok(sink.messages.length >= r.sent && sink.messages.length <= r.sent + inDoubt, `${sink.messages.length} messages for ${r.sent} sent steps and ${inDoubt} in doubt`);
    });
  });
}
