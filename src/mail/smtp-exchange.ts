import type net from 'node:net';
import type { SmtpSessionOptions } from './smtp-connect.ts';
import { type Reply, type ReplyReader, replyText, SmtpError } from './smtp-reply.ts';

/**
 * The command/reply exchange on one SMTP connection: writing commands and reading their replies
 * under the command timeout, closing it (QUIT), and knowing when it broke. A connection that failed
 * in a way that leaves its state unknown (closed, timed out, 421, a refused RSET) is `broken` and is
 * never used again.
 */
export class SmtpExchange {
  protected hasBroken = false;
  #closed = false;
  /** called once when the connection goes away or breaks */
  onBroken: (() => void) | undefined;
  /** what an answer is awaited to, for the timeout's message; undefined while idle in a pool */
  #awaiting: string | undefined = 'greeting';

  protected constructor(
    protected socket: net.Socket,
    protected readonly reader: ReplyReader,
    protected readonly o: SmtpSessionOptions,
  ) {
    this.watch(socket);
  }

  /** one listener each for the life of the socket (a timeout armed per read would add one per read) */
  protected watch(socket: net.Socket): void {
    socket.on('close', () => this.markBroken());
    socket.on('timeout', this.#onTimeout);
    // a failed write does not always close the socket (node 20): the error alone breaks the session
    socket.on('error', () => this.markBroken());
  }

  /** also when the server spoke between transactions (a 421 before closing): the next reply would be out of step */
  get broken(): boolean {
    return this.hasBroken || this.reader.unread > 0 || this.reader.failed !== undefined;
  }

  /** QUIT, then the connection closes; waits at most 1 s for the server's 221 */
  async quit(): Promise<void> {
    if (this.#closed) return;
    if (!this.hasBroken) {
      this.socket.write('QUIT\r\n');
      const timer = setTimeout(() => this.destroy(), 1000);
      await this.reader.next().catch(() => undefined);
      clearTimeout(timer);
    }
    this.destroy();
  }

  destroy(): void {
    this.#closed = true;
    this.markBroken();
    this.reader.stop();
    this.socket.setTimeout(0);
    this.socket.destroy();
  }

  /** in use: silence while an answer is awaited breaks the connection (the command timeout) */
  busy(): void {
    this.#awaiting = 'a command';
    this.socket.setTimeout(this.commandTimeout);
  }

  /** idle in a pool: the connection is closed (QUIT) after `ms` without traffic */
  idle(ms: number): void {
    this.#awaiting = undefined;
    this.socket.setTimeout(ms);
  }

  readonly #onTimeout = (): void => {
    if (this.#awaiting === undefined) {
      void this.quit();
      return;
    }
    const ms = this.socket.timeout;
    this.reader.fail(new SmtpError(`SMTP server ${this.o.host}:${this.o.port} did not answer ${this.#awaiting} within ${ms} ms`, 'ETIMEDOUT'));
    this.destroy();
  };

  protected get commandTimeout(): number {
    return this.o.commandTimeoutMs ?? 60_000;
  }

  protected async command(line: string, what = line.split(' ')[0]): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.read(what);
  }

  protected write(buffers: Buffer[]): void {
    const s = this.socket;
    s.cork();
    for (let i = 0; i < buffers.length; i++) s.write(buffers[i]);
    s.uncork();
  }

  /** the next reply (the socket's timeout, armed by busy(), bounds the wait) */
  protected read(what: string): Promise<Reply> {
    this.#awaiting = what;
    return this.reader.next();
  }

  protected refused(what: string, reply: Reply, code: string): SmtpError {
    if (reply.code === 421) this.markBroken();
    return new SmtpError(`SMTP server ${this.o.host}:${this.o.port} answered ${what} with ${replyText(reply)}`, code, reply, what);
  }

  protected lost(what: string): SmtpError {
    return new SmtpError(`SMTP server ${this.o.host}:${this.o.port} gave no answer to ${what}`, 'EPROTOCOL');
  }

  protected markBroken(): void {
    if (this.hasBroken) return;
    this.hasBroken = true;
    this.onBroken?.();
  }
}
