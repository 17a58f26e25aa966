import pg from 'pg';

/**
 * CPU the PostgreSQL backend spends per statement text, as the backend itself measures it
 * (getrusage, microseconds: far finer than /proc's 10 ms ticks). The sessions ask for it with
 * `log_statement_stats` (a superuser setting, for these sessions only: nothing changes on the
 * server) and `client_min_messages = log`, so each parse, bind and execute message answers with a
 * notice carrying its own CPU and the session's running total. The running total also moves
 * between messages: a statement outside a transaction commits at the Sync after its execute (the
 * WAL flush), which no message's own figure includes; that gap is put on the statement before it.
 */
export const BACKEND_STATS_OPTIONS = '-c log_statement_stats=on -c client_min_messages=log';

export interface StatementCpu {
  /** parse + bind + execute (or a simple query), us */
  ownUs: number;
  /** what the session spent after the statement, before its next message (its commit at Sync), us */
  afterUs: number;
  messages: number;
  /** own us by message: parse, bind (a custom plan is made here), execute, query (simple protocol) */
  byMessage: Record<string, number>;
}

const USAGE = /!\t([\d.]+) s user, ([\d.]+) s system, [\d.]+ s elapsed\n!\t\[([\d.]+) s user, ([\d.]+) s system total\]/;

/** starts collecting on every pg client (call before the pool connects); `take()` returns and clears the sums */
export function collectBackendStats(): { take(): Map<string, StatementCpu> } {
  let sums = new Map<string, StatementCpu>();
  const sessions = new WeakMap<object, { total: number; last?: string }>();
  const emit = pg.Client.prototype.emit;
  pg.Client.prototype.emit = function (this: pg.Client, event: string | symbol, ...args: unknown[]) {
    if (event === 'notice') {
      const notice = args[0] as { message?: string; detail?: string };
      const m = notice.detail && /STATISTICS$/.test(notice.message ?? '') ? USAGE.exec(notice.detail) : null;
      if (m) {
        record(this, notice.message!.split(' ')[0].toLowerCase(), Number(m[1]) + Number(m[2]), Number(m[3]) + Number(m[4]));
        return true;
      }
    }
    return emit.call(this, event, ...args);
  } as typeof emit;

  function record(client: pg.Client, message: string, ownS: number, totalS: number) {
    const text = ((client as unknown as { _activeQuery?: { text?: string } })._activeQuery?.text ?? '(none)').trim().toLowerCase();
    const session = sessions.get(client);
    if (session?.last !== undefined) at(session.last).afterUs += Math.max(0, (totalS - session.total - ownS) * 1e6);
    const s = at(text);
    s.ownUs += ownS * 1e6;
    s.messages++;
    s.byMessage[message] = (s.byMessage[message] ?? 0) + ownS * 1e6;
    sessions.set(client, { total: totalS, last: text });
  }
  function at(text: string): StatementCpu {
    let s = sums.get(text);
    if (!s) sums.set(text, (s = { ownUs: 0, afterUs: 0, messages: 0, byMessage: {} }));
    return s;
  }
  return {
    take() {
      const out = sums;
      sums = new Map();
      return out;
    },
  };
}
