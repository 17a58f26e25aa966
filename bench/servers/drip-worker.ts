import { runDrips } from '../../src/core/drip-run.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { done, ready } from '../lib/child.ts';

/**
 * One notify:process-drips worker for bench/drips.ts: warms up (JIT) on a throw-away in-memory
 * database sending to the same sink, opens its instance, says READY, waits for SIGUSR2 (so every
 * worker starts together and neither start-up nor warm-up is timed), then runs process-drips until
 * a run finds nothing due, and exits with DONE { sent, runs }.
 */
const [database, mailer, html] = process.argv.slice(2);
const WARM_UP = 400;

async function warmUp(): Promise<void> {
  const warm = await createNotify({ database: 'sqlite::memory:', mailer, configFile: false, env: {}, logLevel: 'warn', fromEmail: 'news@example.com', batchSize: WARM_UP });
  try {
    await warm.drips.createSequence({ name: 'warm', steps: [{ delayMinutes: 0, subject: 'Welcome {{ contact.name }}', html }] });
    for (let i = 0; i < WARM_UP; i++) {
      await warm.contacts.upsert({ email: `warm${process.pid}-${i}@example.com`, name: `W${i}` });
      await warm.drips.enroll({ contact: `warm${process.pid}-${i}@example.com`, sequence: 'warm' });
    }
    await runDrips(warm.context);
  } finally {
    await warm.close();
  }
}

await warmUp();
const notify: Notify = await createNotify({ database, mailer, configFile: false, env: {}, logLevel: 'warn', fromEmail: 'news@example.com', batchSize: 200 });
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
