import { NotifyError } from '../errors.ts';
import type { SmtpSession } from './smtp-session.ts';

export interface SmtpPoolOptions {
  /** opens and readies a new connection */
  open: () => Promise<SmtpSession>;
  /** connections at most, busy and idle together */
  max: number;
  /** an idle connection is closed after this long without use */
  idleMs: number;
}

/**
 * Connections reused across messages, at most `max` at a time; a caller beyond that waits for one
 * to come free. A connection that broke (closed, timed out, a 421) is dropped when it is handed
 * back, and its place goes to a new one when someone waits. A message is tried on one connection
 * only: if that connection fails under it, the message fails (the server may have taken it).
 */
export class SmtpPool {
  readonly #idle: SmtpSession[] = [];
  readonly #waiting: { resolve: (s: SmtpSession) => void; reject: (e: Error) => void }[] = [];
  /** connections open or being opened */
  #count = 0;
  #closed = false;
  readonly #closing: Promise<void>[] = [];

  constructor(private readonly o: SmtpPoolOptions) {}

  /** runs `work` on a connection of the pool and gives it back */
  async use<T>(work: (session: SmtpSession) => Promise<T>): Promise<T> {
    const session = await this.#acquire();
    try {
      return await work(session);
    } finally {
      this.#release(session);
    }
  }

  /** QUIT on every idle connection; busy ones close when handed back; later use() is refused */
  async close(): Promise<void> {
    this.#closed = true;
    for (const w of this.#waiting.splice(0)) w.reject(closedError());
    for (const s of this.#idle.splice(0)) this.#quit(s);
    await Promise.all(this.#closing);
  }

  #acquire(): Promise<SmtpSession> {
    if (this.#closed) return Promise.reject(closedError());
    let idle = this.#idle.pop();
    while (idle?.broken) {
      this.#count--;
      this.#quit(idle);
      idle = this.#idle.pop();
    }
    if (idle) {
      idle.busy();
      return Promise.resolve(idle);
    }
    if (this.#count < this.o.max) return this.#open();
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  #open(): Promise<SmtpSession> {
    this.#count++;
    return this.o.open().then(
      (session) => {
        session.onBroken = () => this.#dropIdle(session);
        return session;
      },
      (err) => {
        this.#count--;
        this.#serveWaiting();
        throw err;
      },
    );
  }

  #release(session: SmtpSession): void {
    if (session.broken || this.#closed) {
      this.#count--;
      this.#quit(session);
      this.#serveWaiting();
      return;
    }
    const next = this.#waiting.shift();
    if (next) {
      next.resolve(session);
      return;
    }
    session.idle(this.o.idleMs);
    this.#idle.push(session);
  }

  /** a connection freed its place: the next one waiting gets a new connection */
  #serveWaiting(): void {
    if (this.#closed || this.#count >= this.o.max) return;
    const next = this.#waiting.shift();
    if (next) this.#open().then(next.resolve, next.reject);
  }

  /** an idle connection that closed (the server's idle timeout, ours) leaves the pool */
  #dropIdle(session: SmtpSession): void {
    const at = this.#idle.indexOf(session);
    if (at < 0) return;
    this.#idle.splice(at, 1);
    this.#count--;
    this.#serveWaiting();
  }

  #quit(session: SmtpSession): void {
    const done = session.quit();
    this.#closing.push(done);
    void done.finally(() => this.#closing.splice(this.#closing.indexOf(done), 1));
  }
}

const closedError = () => new NotifyError('CLOSED', 'The SMTP transport is closed');
