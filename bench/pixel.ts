import { type Child, startChild } from './lib/child.ts';
import { LOAD_CORE, pinSelf, SUBJECT_CORE } from './lib/cores.ts';
import { benchDatabase, type BenchDatabase, type Engine, postgresAvailable } from './lib/db.ts';
import { startGuard } from './lib/guard.ts';
import { load } from './lib/load.ts';
import { ROUNDS, sized } from './lib/options.ts';
import { count, fmt, info, report, skip } from './lib/report.ts';
import { measureCpu } from './lib/cpu.ts';
import { countEvents, countOutbound, type SeededSends, seedSends } from './lib/seed.ts';
import { median } from './lib/timing.ts';

/**
 * The tracking endpoints under HTTP load, on SQLite and on PostgreSQL:
 *   open with recording  vs  a bare node:http server answering the same GIF     target >= 0.6
 *   open with recording  vs  one awaited INSERT per request                     target >= 3
 *   click                vs  open                                               target >= 0.9
 *   open with webhooksOut configured (each open also written to the outbox)  vs  open   target >= 0.95
 * Each server runs in its own process on the subject core; the load generator on the other.
 * All servers are up side by side and loaded in turn (bare, naive, open, click, open with webhooksOut;
 * every other round in reverse order), ROUNDS times;
 * each ratio is the median of the per-round ratios, so a drift in the machine hits baseline and
 * subject alike. Every answered 200 must be a stored event (counted after a graceful stop, which
 * flushes what the recorder holds).
 */
const ROUND_SECONDS = sized(2, 1);
const SENDS = sized(2000, 200);

type Server = Child<{ port: number }>;
const server = (file: string, args: string[] = [], subject = false) => startChild<{ port: number }>(new URL(`./servers/${file}`, import.meta.url), { args, core: SUBJECT_CORE, subject });
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

type Figures = { bare: number; naive: number; open: number; click: number; hooked: number };

/** an endpoint nobody serves: only the outbox writing is measured (no worker runs here) */
const HOOKS = JSON.stringify([{ url: 'http://127.0.0.1:9/hooks', secret: 'bench', events: ['notify:email.opened'] }]);

async function engine(kind: Engine): Promise<void> {
  if (kind === 'postgres' && !(await postgresAvailable())) return skip('pixel open [postgres]', 'PostgreSQL does not answer; set NOTIFY_BENCH_PG_URL');
  const dbs: BenchDatabase[] = [benchDatabase(kind), benchDatabase(kind), benchDatabase(kind)];
  const servers: Server[] = [];
  try {
    const [naiveData, notifyData, hookedData] = await Promise.all(dbs.map((d) => seedSends(d.url, SENDS)));
    const bare = await server('bare-gif.ts');
    const naive = await server('naive-insert.ts', [dbs[0].url]);
    const notify = await server('notify.ts', [dbs[1].url], true);
    const hooked = await server('notify.ts', [dbs[2].url, HOOKS], true);
    servers.push(bare, naive, notify, hooked);
    if (!(await answers(notify, openPaths(notifyData)[0], isGif))) return skip(`pixel open [${kind}]`, 'GET /notify/open/<token> does not answer the GIF');
    if (!(await answers(notify, notifyData.clickPaths[0], isRedirect))) return skip(`click [${kind}]`, 'GET /notify/click/<token>?l=<ref> does not redirect');

    const subjects: [keyof Figures, Server, string[]][] = [
      ['bare', bare, openPaths(notifyData)],
      ['naive', naive, openPaths(naiveData)],
      ['open', notify, openPaths(notifyData)],
      ['click', notify, notifyData.clickPaths],
      ['hooked', hooked, openPaths(hookedData)],
    ];
    for (const [, s, paths] of subjects) await rps(s, paths, 1); // warm-up (JIT, pools, caches)
    const guard = await startGuard();
    const rounds: Figures[] = [];
    const cpu: Partial<Record<keyof Figures, { server: number[]; database: number[] }>> = {};
    // the database each server writes to (bare writes nothing)
    const serverUrl: Partial<Record<keyof Figures, string>> = { naive: dbs[0].url, open: dbs[1].url, click: dbs[1].url, hooked: dbs[2].url };
    for (let r = 0; r < ROUNDS; r++) {
      const figures = {} as Figures;
      // Every other round in reverse order: a subject loaded just after another (the naive server's
      // commit per request, the click round's flushes) no longer always follows the same one.
      for (const [key, s, paths] of r % 2 === 0 ? subjects : [...subjects].reverse()) {
        const url = serverUrl[key];
        if (!s.proc.pid) {
          figures[key] = await rps(s, paths);
          continue;
        }
        // CPU per answered request of the server's process and of its PostgreSQL backends
        const m = await measureCpu(s.proc.pid, kind === 'postgres' ? url : undefined, () => load({ origin: origin(s), paths, seconds: ROUND_SECONDS }));
        figures[key] = m.result.rps;
        const c = (cpu[key] ??= { server: [], database: [] });
        c.server.push(m.serverUs / m.result.total);
        if (m.databaseUs !== undefined) c.database.push(m.databaseUs / m.result.total);
      }
      rounds.push(figures);
    }
    const checked = guard.finish();
    await notify.stop();
    const answered = ((await notify.done()) as { answered?: Record<string, number> } | undefined)?.answered ?? {};
    await hooked.stop();
    const hookedAnswered = ((await hooked.done()) as { answered?: Record<string, number> } | undefined)?.answered ?? {};
    const recorded = { open: await countEvents(dbs[1].url, 'open'), click: await countEvents(dbs[1].url, 'click'), hooked: await countOutbound(dbs[2].url) };
    const med = (k: keyof Figures) => median(rounds.map((x) => x[k]));
    const ratio = (a: keyof Figures, b: keyof Figures) => median(rounds.map((x) => x[a] / x[b]));
    const all = (n: number, of: number, what: string) => `${n === of ? 'all' : 'ONLY'} ${count(n)} of ${count(of)} ${what} recorded`;
    // the spread the medians hide: a ratio's rounds disagree more on a busy machine
    const perRound = (a: keyof Figures, b: keyof Figures) => rounds.map((x) => fmt(x[a] / x[b])).join(' ');
    info(`ratios per round [${kind}]`, `open/bare ${perRound('open', 'bare')}; webhooksOut/open ${perRound('hooked', 'open')}`);
    info(`medians of ${ROUNDS} rounds [${kind}]`, `bare ${fmt(med('bare'))}, naive ${fmt(med('naive'))}, open ${fmt(med('open'))}, click ${fmt(med('click'))}, open with webhooksOut ${fmt(med('hooked'))} req/s`);
    const perRequest = (k: keyof Figures, what: string) => {
      const c = cpu[k];
      if (!c || c.server.length === 0) return [];
      return [`${what} ${fmt(median(c.server))} µs${c.database.length > 0 ? ` + PostgreSQL ${fmt(median(c.database))} µs` : ''}`];
    };
    const cpuLine = [...perRequest('bare', 'bare'), ...perRequest('naive', 'naive'), ...perRequest('open', 'open'), ...perRequest('click', 'click'), ...perRequest('hooked', 'open with webhooksOut')];
    if (cpuLine.length > 0) info(`CPU per answered request, medians [${kind}]`, `${cpuLine.join('; ')} (the server's process${kind === 'postgres' ? ' + its database backends' : ''}; load distorts CPU time far less than req/s)`);
    const serverCpu = (k: keyof Figures) => median(cpu[k]?.server ?? []);
    // on one saturated core, req/s is the inverse of the CPU a request takes there: this is the
    // ratio a quiet run's req/s tends to (PostgreSQL's backends, not pinned, are printed above apart)
    if (cpu.bare && cpu.open) info(`CPU ratio bare / open, server process [${kind}]`, fmt(serverCpu('bare') / serverCpu('open')));
    const line = (name: string, a: keyof Figures, b: keyof Figures, baselineName: string, limit: number, note?: string) =>
      report({ name: `${name} [${kind}]`, value: med(a), unit: 'req/s', baselineName, baseline: med(b), ratio: ratio(a, b), target: { on: 'ratio', op: '>=', limit }, note }, checked);
    line('pixel open with recording', 'open', 'bare', 'bare node:http GIF', 0.6, all(recorded.open, answered['200'] ?? 0, 'answered opens'));
    line('pixel open vs one INSERT per request', 'open', 'naive', 'one awaited INSERT per request', 3);
    line('click vs open', 'click', 'open', 'open', 0.9, all(recorded.click, answered['302'] ?? 0, 'redirects'));
    line('pixel open with webhooksOut vs without', 'hooked', 'open', 'open without webhooksOut', 0.95, all(recorded.hooked, hookedAnswered['200'] ?? 0, 'answered opens as outbox rows'));
  } finally {
    for (const s of servers) await s.stop();
    for (const d of dbs) await d.drop();
  }
}

/** BENCH_ENGINE=sqlite|postgres runs one engine only (both when unset) */
const ENGINES: Engine[] = ['sqlite', 'postgres'];
const only = process.env.BENCH_ENGINE;
if (only && !ENGINES.includes(only as Engine)) throw new Error(`BENCH_ENGINE=${only}: expected one of ${ENGINES.join(', ')}`);
pinSelf(LOAD_CORE);
for (const kind of ENGINES) if (!only || only === kind) await engine(kind);
