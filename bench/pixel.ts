import { type Child, startChild } from './lib/child.ts';
import { benchDatabase, type Engine, postgresAvailable } from './lib/db.ts';
import { load } from './lib/load.ts';
import { info, report, skip } from './lib/report.ts';
import { countEvents, type SeededSends, seedSends } from './lib/seed.ts';

/**
 * The tracking endpoints under HTTP load (autocannon on loopback, server in its own process):
 *   open with recording  vs  a bare node:http server answering the same GIF     goal >= 0.45
 *   open with recording  vs  one awaited INSERT per request                     goal >= 3
 *   click                vs  open                                               goal >= 0.9
 * on SQLite and on PostgreSQL. Every answered 200 must be a stored event (checked after a
 * graceful stop, which flushes what the recorder holds).
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const WARMUP = 1;
const SENDS = 2000;

const server = (file: string, args: string[] = []) => startChild<{ port: number }>(new URL(`./servers/${file}`, import.meta.url), args);
const origin = (c: Child<{ port: number }>) => `http://127.0.0.1:${c.info.port}`;

async function rate(c: Child<{ port: number }>, paths: string[]) {
  await load({ origin: origin(c), paths, seconds: WARMUP });
  return load({ origin: origin(c), paths, seconds: SECONDS });
}

const openPaths = (s: SeededSends) => s.tokens.map((t) => `/notify/open/${t}`);

async function bare(): Promise<number> {
  const c = await server('bare-gif.ts');
  try {
    const r = await rate(c, openPaths({ tokens: Array.from({ length: 100 }, (_, i) => `token${i}`) } as SeededSends));
    info('baseline bare node:http GIF', `${Math.round(r.rps).toLocaleString('en-US')} req/s`);
    return r.rps;
  } finally {
    await c.stop();
  }
}

async function naive(url: string, seeded: SeededSends): Promise<number> {
  const c = await server('naive-insert.ts', [url]);
  try {
    return (await rate(c, openPaths(seeded))).rps;
  } finally {
    await c.stop();
  }
}

/** Whether the endpoint is built in this checkout: a real send token must get `expect`. */
async function answers(c: Child<{ port: number }>, path: string, expect: (r: Response) => boolean): Promise<boolean> {
  const res = await fetch(origin(c) + path, { redirect: 'manual' });
  await res.arrayBuffer();
  return expect(res);
}

async function notifyRates(url: string, seeded: SeededSends) {
  const c = await server('notify.ts', [url]);
  const before = { open: await countEvents(url, 'open'), click: await countEvents(url, 'click') };
  let open: number | undefined;
  let click: number | undefined;
  let served = false;
  try {
    if (await answers(c, openPaths(seeded)[0], (r) => r.status === 200 && r.headers.get('content-type') === 'image/gif')) open = (await rate(c, openPaths(seeded))).rps;
    if (await answers(c, seeded.clickPaths[0], (r) => r.status >= 300 && r.status < 400 && !!r.headers.get('location'))) click = (await rate(c, seeded.clickPaths)).rps;
  } finally {
    await c.stop();
    served = true;
  }
  const answered = served ? (((await c.done()) as { answered: Record<string, number> } | undefined)?.answered ?? {}) : {};
  const recorded = { open: (await countEvents(url, 'open')) - before.open, click: (await countEvents(url, 'click')) - before.click };
  return { open, click, answered, recorded };
}

async function engine(kind: Engine, bareRps: number): Promise<void> {
  if (kind === 'postgres' && !(await postgresAvailable())) return skip("pixel open [postgres]", 'PostgreSQL does not answer; set NOTIFY_BENCH_PG_URL');
  const db = benchDatabase(kind);
  try {
    const seeded = await seedSends(db.url, SENDS);
    const naiveRps = await naive(db.url, seeded);
    info(`baseline one awaited INSERT per request [${kind}]`, `${Math.round(naiveRps).toLocaleString('en-US')} req/s`);
    const n = await notifyRates(db.url, seeded);
    const ok = n.answered['200'] ?? 0;
    const redirects = (n.answered['302'] ?? 0) + (n.answered['303'] ?? 0) + (n.answered['307'] ?? 0);
    if (n.open === undefined) return skip(`pixel open [${kind}]`, 'GET /notify/open/<token> does not answer the GIF yet');
    const note = `recorded ${n.recorded.open.toLocaleString('en-US')} opens for ${ok.toLocaleString('en-US')} answered 200`;
    report({ name: `pixel open with recording [${kind}]`, figure: n.open, unit: 'req/s', baselineName: 'bare node:http', baseline: bareRps, kind: 'rate', goal: { on: 'ratio', min: 0.45 }, note });
    report({ name: `pixel open vs one INSERT per request [${kind}]`, figure: n.open, unit: 'req/s', baselineName: 'naive', baseline: naiveRps, kind: 'rate', goal: { on: 'ratio', min: 3 } });
    if (n.click === undefined) return skip(`click [${kind}]`, 'GET /notify/click/<token>?l=<ref> does not redirect yet');
    const clickNote = `recorded ${n.recorded.click.toLocaleString('en-US')} clicks for ${redirects.toLocaleString('en-US')} redirects`;
    report({ name: `click vs open [${kind}]`, figure: n.click, unit: 'req/s', baselineName: 'open', baseline: n.open, kind: 'rate', goal: { on: 'ratio', min: 0.9 }, note: clickNote });
  } finally {
    await db.drop();
  }
}

const bareRps = await bare();
for (const kind of ['sqlite', 'postgres'] as Engine[]) await engine(kind, bareRps);
