import { runDrips } from '../../src/core/drip-run.ts';
import { createNotify } from '../../src/notify.ts';
import { done, ready } from '../lib/child.ts';

/**
 * One notify:process-drips worker for bench/drips.ts: opens its instance, says READY, waits for
 * SIGUSR2 (so every worker starts together, process start-up not timed), then runs process-drips
 * until a run finds nothing due, and exits with DONE { sent, runs }.
 */
const [database, mailer] = process.argv.slice(2);
const notify = await createNotify({ database, mailer, configFile: false, env: {}, logLevel: 'warn', fromEmail: 'news@example.com', batchSize: 200 });
await notify.context.store.sequences.getById(1); // opens a pool connection before the clock starts
process.once('SIGUSR2', async () => {
  let sent = 0;
  let runs = 0;
  for (;;) {
    const r = await runDrips(notify.context);
    runs++;
    sent += r.sent;
    if (r.claimed === 0) break;
  }
  await notify.close();
  done({ sent, runs });
  process.exit(0);
});
ready({ pid: process.pid });
