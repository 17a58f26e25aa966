import { type Child, startChild } from './lib/child.ts';
import { benchDatabase, type BenchDatabase, type Engine, postgresAvailable } from './lib/db.ts';
import { load } from './lib/load.ts';
import { info, report, skip } from './lib/report.ts';
import { countEvents, type SeededSends, seedSends } from './lib/seed.ts';
import { median } from './lib/timing.ts';

/**
 * The tracking endpoints under HTTP load (autocannon on loopback, each server in its own process):
 *   open with recording  vs  a bare node:http server answering the same GIF     goal >= 0.45
 *   open with recording  vs  one awaited INSERT per request                     goal >= 3
 *   click                vs  open                                               goal >= 0.9
 * on SQLite and on PostgreSQL. The servers run side by side and are loaded in turn, in several
 * short rounds; each ratio is the median of the per-round ratios, so a change in the machine's
 * background load hits baseline and subject alike. Every answered 200 must be a stored event
 * (checked after a graceful stop, which flushes what the recorder holds).
 */
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 1.5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SENDS = 2000;

type Server = Child<{ port: number }>;
const server = (file: string, args: string[] = []) => startChild<{ port: number }>(new URL(`./servers/${file}`, import.meta.url), args);
const origin = (c: Server) => `http://127.0.0.1:${c.info.port}`;
const openPaths = (s: SeededSends) => s.tokens.map((t) => `/notify/open/${t}`);
const rps = async (c: Server, paths: string[], seconds = ROUND_SECONDS) => (await load({ origin: origin(c), paths, seconds })).rps;

/** Whether the endpoint is built in this checkout: a real send token must get `expect`. */
async function answers(c: Server, path: string, expect: (r: Response) => boolean): Promise<boolean> {
  const res = await fetch(origin(c) + path, { redirect: 'manual' });
  await res.arrayBuffer();
  return expect(res);
}

const isGif = (r: Response) => r.status === 200 && r.headers.get('content-type') === 'image/gif';
const isRedirect = (r: Response) => r.status >= 300 && r.status < 400 && !!r.headers.get('location');

async function engine(kind: Engine): Promise<void> {
  if (kind === 'postgres' && !(await postgresAvailable())) return skip('pixel open [postgres]', 'PostgreSQL does not answer; set NOTIFY_BENCH_PG_URL');
  const dbs: BenchDatabase[] = [benchDatabase(kind), benchDatabase(kind)];
  const servers: Server[] = [];
  try {
    const [naiveData, notifyData] = await Promise.all(dbs.map((d) => seedSends(d.url, SENDS)));
    const bare = await server('bare-gif.ts');
    const naive = await server('naive-insert.ts', [dbs[0].url]);
    const notify = await server('notify.ts', [dbs[1].url]);
    servers.push(bare, naive, notify);
    const hasOpen = await answers(notify, openPaths(notifyData)[0], isGif);
    const hasClick = await answers(notify, notifyData.clickPaths[0], isRedirect);
    if (!hasOpen) return skip(`pixel open [${kind}]`, 'GET /notify/open/<token> does not answer the GIF yet');

    const rounds: { bare: number; naive: number; open: number; click?: number }[] = [];
    const subjects: [Server, string[]][] = [[bare, openPaths(notifyData)], [naive, openPaths(naiveData)], [notify, openPaths(notifyData)], ...(hasClick ? [[notify, notifyData.clickPaths] as [Server, string[]]] : [])];
    for (const [s, paths] of subjects) await rps(s, paths, 1); // warm-up (JIT, pools, caches)
    for (let r = 0; r < ROUNDS; r++) {
      const figures: number[] = [];
      for (const [s, paths] of subjects) figures.push(await rps(s, paths));
      rounds.push({ bare: figures[0], naive: figures[1], open: figures[2], click: figures[3] });
    }
    await notify.stop();
    const answered = ((await notify.done()) as { answered?: Record<string, number> } | undefined)?.answered ?? {};
    // the availability probes above were answered and recorded too
    const recorded = { open: await countEvents(dbs[1].url, 'open'), click: await countEvents(dbs[1].url, 'click') };
    const med = (k: 'bare' | 'naive' | 'open' | 'click') => median(rounds.map((x) => x[k]!));
    const ratio = (a: 'open' | 'click', b: 'bare' | 'naive' | 'open') => median(rounds.map((x) => x[a]! / x[b]));
    info(`baseline bare node:http GIF [${kind} run]`, `${fmtRps(med('bare'))}; one awaited INSERT per request: ${fmtRps(med('naive'))}`);
    const ok = answered['200'] ?? 0;
    const redirects = answered['302'] ?? 0;
    report(byRatio(`pixel open with recording [${kind}]`, med('open'), 'bare node:http', ratio('open', 'bare'), 0.45, `${recorded.open === ok ? 'all' : 'ONLY'} ${fmtN(recorded.open)} of ${fmtN(ok)} answered opens recorded`));
    report(byRatio(`pixel open vs one INSERT per request [${kind}]`, med('open'), 'naive', ratio('open', 'naive'), 3));
    if (!hasClick) return skip(`click [${kind}]`, 'GET /notify/click/<token>?l=<ref> does not redirect yet');
    report(byRatio(`click vs open [${kind}]`, med('click'), 'open', ratio('click', 'open'), 0.9, `${recorded.click === redirects ? 'all' : 'ONLY'} ${fmtN(recorded.click)} of ${fmtN(redirects)} redirects recorded`));
  } finally {
    for (const s of servers) await s.stop();
    for (const d of dbs) await d.drop();
  }
}

const fmtN = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtRps = (n: number) => `${fmtN(n)} req/s`;

/** A measurement whose baseline is implied by the median per-round ratio. */
function byRatio(name: string, figure: number, baselineName: string, ratio: number, min: number, note?: string) {
  return { name, figure, unit: 'req/s', baselineName, baseline: figure / ratio, kind: 'rate' as const, goal: { on: 'ratio' as const, min }, note };
}

for (const kind of ['sqlite', 'postgres'] as Engine[]) await engine(kind);
