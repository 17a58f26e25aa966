import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { boundSenderHeap } from '../../src/cli/sender-heap.ts';
import { createNotify } from '../../src/notify.ts';
import { ready, serveCommands } from '../lib/child.ts';
import { benchEmailHtml } from '../lib/email.ts';

/**
 * notify sending in a process of its own, so its wall time and its CPU time (process.cpuUsage:
 * this process only, not the sink's nor the database server's) belong to the send path alone.
 * Usage: send-worker.ts <database url> <smtp url>. Commands, answered with
 * { sent, failed, ms, cpuMs } for the timed part:
 *   { do: 'seed', n, list? }   n more contacts, in that list when given (not timed)
 *   { do: 'campaign', list? }  a new campaign to that list (else every contact), one notify:send-campaign run
 *   { do: 'drips' }      a new one-step sequence, every contact enrolled (not timed), then
 *                        notify:process-drips runs until the step went to every contact
 * Both send the same 20 KB / 30-link email, so CPU per message compares like with like.
 * `collect: true` on either runs a full garbage collection just before the timed part;
 * `memory: true` adds `memory`: process.memoryUsage() sampled every 200 ms through the timed part.
 */
const [database, mailer] = process.argv.slice(2);
// as notify:send-campaign and `notify worker` bound it (BENCH_SUBJECT_NODE_FLAGS='--heap-growing-percent=0': V8's own growth)
boundSenderHeap();
const notify = await createNotify({ database, mailer, configFile: false, env: {}, logLevel: 'warn', fromEmail: 'news@example.com', baseUrl: 'https://news.example.com', batchSize: 1_000_000 });
const html = benchEmailHtml();
const emails: string[] = [];
let sequences = 0;

/**
 * A full collection, so a timed part is not charged for the garbage of the untimed setup before it
 * (1,000 enrollments before a drip run): with --trace-gc, a mark-compact or its incremental marking
 * fell into one timed part or the other from round to round, moving that round's ratio by 0.3-0.6.
 */
let gc: (() => void) | undefined;
function collectGarbage() {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

/** Where the sender's memory is, in MB: which part grows is which part to cut. */
const memoryNow = () => {
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round(n / 1024 / 102.4) / 10;
  return { rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers) };
};

async function timed(work: () => Promise<{ sent: number; failed: number }>, collect = false, memory = false) {
  if (collect) collectGarbage();
  const samples: ReturnType<typeof memoryNow>[] = [];
  const sampler = memory ? setInterval(() => samples.push(memoryNow()), 200) : undefined;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const r = await work().finally(() => clearInterval(sampler));
  const used = process.cpuUsage(cpu);
  return { ...r, ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000, ...(memory ? { memory: samples } : {}) };
}

async function seed(n: number, list?: string): Promise<{ contacts: number }> {
  const fresh = Array.from({ length: n }, (_, i) => `reader${emails.length + i}@example.com`);
  const lists = list ? [list] : [];
  for (let i = 0; i < fresh.length; i += 50) await Promise.all(fresh.slice(i, i + 50).map((email) => notify.contacts.upsert({ email, name: 'Reader', lists })));
  emails.push(...fresh);
  return { contacts: emails.length };
}

async function campaign(list?: string, collect = false, memory = false) {
  const { id } = await notify.campaigns.create({ subject: 'This week', html, list });
  return timed(() => notify.campaigns.send(id), collect, memory);
}

async function drips(collect = false) {
  const name = `bench-${++sequences}`;
  await notify.drips.createSequence({ name, steps: [{ delayMinutes: 0, subject: 'This week', html }] });
  for (const email of emails) await notify.drips.enroll({ contact: email, sequence: name });
  return timed(async () => {
    const total = { sent: 0, failed: 0 };
    for (;;) {
      const r = await notify.drips.process();
      total.sent += r.sent;
      total.failed += r.failed;
      if (r.sent + r.failed === 0 || total.sent + total.failed >= emails.length) return total;
    }
  }, collect);
}

serveCommands(
  (cmd) => {
    const list = typeof cmd.list === 'string' ? cmd.list : undefined;
    if (cmd.do === 'seed') return seed(Number(cmd.n), list);
    if (cmd.do === 'campaign') return campaign(list, cmd.collect === true, cmd.memory === true);
    if (cmd.do === 'drips') return drips(cmd.collect === true);
    throw new Error(`unknown command ${cmd.do}`);
  },
  () => notify.close(),
);
ready({ pid: process.pid });
