import type { Socket } from 'node:net';

/**
 * An SMTP failure the failure classifier reads: `responseCode` when the server answered (4yz is
 * transient, 5yz permanent), else a connection `code` (ECONNECTION, ETIMEDOUT, ...) that is
 * transient. The codes and field names are nodemailer's, which the rest of notify already knows.
 */
export class SmtpError extends Error {
  readonly code: string;
  readonly responseCode: number | undefined;
  /** the server's whole reply, when there was one */
  readonly response: string | undefined;
  /** the command the reply answered */
  readonly command: string | undefined;

  constructor(message: string, code: string, reply?: Reply, command?: string) {
    super(message);
    this.name = 'SmtpError';
    this.code = code;
    this.responseCode = reply?.code;
    this.response = reply ? replyText(reply) : undefined;
    this.command = command;
  }
}

export interface Reply {
  code: number;
  /** the text of each line, without the code and its separator */
  lines: string[];
}

export const replyText = (r: Reply): string => `${r.code} ${r.lines.join(' ')}`.trim();

/** a connection error: the errno code node gave it, else ECONNECTION */
export function connectionError(err: Error, host: string): SmtpError {
  const code = (err as { code?: unknown }).code;
  const wrapped = new SmtpError(`SMTP connection to ${host}: ${err.message}`, typeof code === 'string' ? code : 'ECONNECTION');
  wrapped.cause = err;
  return wrapped;
}

// an answer can only be this long by mistake: refuse rather than keep reading
const MAX_PENDING = 64 * 1024;

/**
 * Replies read off a socket in order. Several may be awaited at once (PIPELINING): each `next()`
 * gets the reply after the one the previous call got. Once the connection fails every waiting and
 * later call rejects with the same error.
 */
export class ReplyReader {
  #buffer = '';
  #lines: string[] = [];
  readonly #ready: Reply[] = [];
  readonly #waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = [];
  #failed: Error | undefined;

  constructor(
    private socket: Socket,
    private readonly host: string,
  ) {
    this.#attach(socket);
  }

  get failed(): Error | undefined {
    return this.#failed;
  }

  /** replies read that nobody asked for yet (between transactions: the server spoke unasked) */
  get unread(): number {
    return this.#ready.length;
  }

  /** read from another socket from now on (after STARTTLS); what was read before is forgotten */
  switchTo(socket: Socket): void {
    this.#detach(this.socket);
    this.socket = socket;
    this.#buffer = '';
    this.#lines = [];
    this.#attach(socket);
  }

  next(): Promise<Reply> {
    const reply = this.#ready.shift();
    if (reply) return Promise.resolve(reply);
    if (this.#failed) return Promise.reject(this.#failed);
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** fails every waiting and later read with `err` (the first failure wins) */
  fail(err: Error): void {
    this.#failed ??= err;
    for (const w of this.#waiting.splice(0)) w.reject(this.#failed);
  }

  stop(): void {
    this.#detach(this.socket);
  }

  #attach(socket: Socket): void {
    socket.on('data', this.#onData);
    socket.on('error', this.#onError);
    socket.on('close', this.#onClose);
  }

  #detach(socket: Socket): void {
    socket.off('data', this.#onData);
    socket.off('error', this.#onError);
    socket.off('close', this.#onClose);
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#buffer += chunk.toString('latin1');
    if (this.#buffer.length > MAX_PENDING) {
      this.fail(new SmtpError(`SMTP server ${this.host} sent an answer too long`, 'EPROTOCOL'));
      return;
    }
    let end = this.#buffer.indexOf('\n');
    while (end >= 0) {
      const line = this.#buffer.charCodeAt(end - 1) === 13 ? this.#buffer.slice(0, end - 1) : this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 1);
      this.#line(line);
      end = this.#buffer.indexOf('\n');
    }
  };

  #line(line: string): void {
    this.#lines.push(line.slice(4));
    if (line[3] === '-') return;
    const reply = { code: Number(line.slice(0, 3)) || 0, lines: this.#lines };
    this.#lines = [];
    const waiter = this.#waiting.shift();
    if (waiter) waiter.resolve(reply);
    else this.#ready.push(reply);
  }

  readonly #onError = (err: Error): void => this.fail(connectionError(err, this.host));
  readonly #onClose = (): void => this.fail(new SmtpError(`SMTP server ${this.host} closed the connection`, 'ECONNECTION'));
}
