import { heldBack } from '../core/mailer.ts';
import { dataBody } from './dot-stuffing.ts';
import { type Envelope, envelopeCommands, type Replies, type SentMessage, sortRecipients } from './smtp-envelope.ts';
import { connect, defaultName, type SmtpSessionOptions, startTls } from './smtp-connect.ts';
import { SmtpExchange } from './smtp-exchange.ts';
import { type Reply, ReplyReader, replyText, SmtpError } from './smtp-reply.ts';

/**
 * One SMTP connection (RFC 5321): greeting, EHLO (HELO when EHLO is refused), STARTTLS when
 * offered (RFC 3207), AUTH PLAIN or LOGIN, then any number of mail transactions, one at a time.
 * The exchange of commands and replies, its timeouts and when it counts as broken are SmtpExchange's.
 */
export class SmtpSession extends SmtpExchange {
  /** upper-case extension keywords of the last EHLO answer, without their arguments */
  extensions = new Set<string>();
  #authMechanisms: string[] = [];

  /** connects and says hello; a failure before the session is ready closes the connection */
  static async open(o: SmtpSessionOptions): Promise<SmtpSession> {
    const socket = await connect(o);
    const session = new SmtpSession(socket, new ReplyReader(socket, `${o.host}:${o.port}`), o);
    try {
      await session.#hello();
      return session;
    } catch (err) {
      session.destroy();
      throw err;
    }
  }

  async #hello(): Promise<void> {
    this.socket.setTimeout(this.o.greetingTimeoutMs ?? 30_000);
    const greeting = await this.read('greeting');
    if (greeting.code !== 220) throw this.refused('greeting', greeting, 'EPROTOCOL');
    this.busy();
    await this.#ehlo();
    if (!this.o.secure && this.extensions.has('STARTTLS')) {
      const reply = await this.command('STARTTLS');
      if (reply.code !== 220) throw this.refused('STARTTLS', reply, 'ETLS');
      await this.#upgrade();
      await this.#ehlo();
    }
    if (this.o.auth) await this.#authenticate(this.o.auth);
  }

  async #ehlo(): Promise<void> {
    const name = this.o.name || defaultName();
    let reply = await this.command(`EHLO ${name}`);
    if (reply.code === 250) {
      this.extensions = new Set(reply.lines.slice(1).map((l) => l.split(' ')[0].toUpperCase()));
      const auth = reply.lines.find((l) => /^AUTH[ =]/i.test(l));
      this.#authMechanisms = auth ? auth.slice(5).toUpperCase().split(/\s+/) : [];
      return;
    }
    // an old server: HELO, and no extensions
    reply = await this.command(`HELO ${name}`);
    if (reply.code !== 250) throw this.refused('HELO', reply, 'EPROTOCOL');
    this.extensions = new Set();
    this.#authMechanisms = [];
  }

  async #upgrade(): Promise<void> {
    const secure = await startTls(this.socket, this.o);
    this.watch(secure);
    secure.setTimeout(this.commandTimeout);
    this.socket = secure;
    this.reader.switchTo(secure);
  }

  async #authenticate(auth: { user: string; pass: string }): Promise<void> {
    const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
    const mechs = this.#authMechanisms;
    let reply: Reply;
    if (!mechs.includes('PLAIN') && mechs.includes('LOGIN')) {
      reply = await this.command('AUTH LOGIN');
      if (reply.code === 334) reply = await this.command(b64(auth.user), 'AUTH LOGIN');
      if (reply.code === 334) reply = await this.command(b64(auth.pass), 'AUTH LOGIN');
    } else reply = await this.command(`AUTH PLAIN ${b64(`\0${auth.user}\0${auth.pass}`)}`, 'AUTH PLAIN');
    if (reply.code !== 235) throw this.refused('AUTH', reply, 'EAUTH');
  }

  /**
   * One mail transaction. With PIPELINING, MAIL FROM, every RCPT TO and DATA go in one write. Some
   * recipients refused: the message goes to the others. All refused: an error with the last
   * refusal's code. Any refusal leaves the connection ready for the next message (RSET). With
   * `ready`, everything but the end-of-data line goes out, and that line only once `ready` says true.
   */
  async send(envelope: Envelope, parts: readonly Buffer[], smtpUtf8: boolean, ready?: Promise<boolean>): Promise<SentMessage> {
    const body = dataBody(parts);
    const commands = envelopeCommands(envelope, body.eightBit, smtpUtf8, this.extensions);
    const replies = this.extensions.has('PIPELINING') ? await this.#pipelined(commands) : await this.#oneByOne(commands);
    // 421: the server is closing the connection (RFC 5321 3.8); it says why better than the close
    const closing = replies.findIndex((r) => r?.code === 421);
    if (closing >= 0) {
      this.markBroken();
      throw new SmtpError(`${commands[closing].split(':')[0]} failed: ${replyText(replies[closing]!)}`, 'EENVELOPE', replies[closing], commands[closing].split(':')[0]);
    }
    if (replies.lost) throw replies.lost;
    const mail = replies[0]!;
    const { accepted, rejected } = sortRecipients(envelope.to, replies);
    const data = replies[envelope.to.length + 1];
    if (mail.code !== 250) return this.#abandon(data, new SmtpError(`Mail command failed: ${replyText(mail)}`, 'EENVELOPE', mail, 'MAIL FROM'));
    if (accepted.length === 0) {
      const last = rejected.at(-1)!.reply;
      return this.#abandon(data, new SmtpError(`Can't send mail - all recipients were rejected: ${replyText(last)}`, 'EENVELOPE', last, 'RCPT TO'));
    }
    if (data?.code !== 354) return this.#abandon(data, data ? this.refused('DATA', data, 'EENVELOPE') : this.lost('DATA'));
    if (ready) await this.#holdEnd(body.buffers, ready);
    else this.write(body.buffers);
    const end = await this.read('the end of DATA');
    if (end.code !== 250) {
      if (end.code === 421) this.markBroken();
      throw new SmtpError(`Message failed: ${replyText(end)}`, 'EMESSAGE', end, 'DATA');
    }
    return { accepted, rejected: rejected.map(({ recipient, response }) => ({ recipient, response })), response: replyText(end) };
  }

  /**
   * The body without its end-of-data line, then that line once `ready` says true: a server takes a
   * message only at that line (RFC 5321 4.1.1.4), so until then the message cannot leave, and a
   * connection that closes first (a crash, `false`) leaves nothing taken. A message held back
   * closes the connection: within DATA there is no other way to take it back.
   */
  async #holdEnd(buffers: Buffer[], ready: Promise<boolean>): Promise<void> {
    const end = buffers.pop()!;
    this.write(buffers);
    const go = await ready.catch((err: unknown) => {
      this.destroy();
      throw err;
    });
    if (!go) {
      this.destroy();
      throw heldBack();
    }
    this.write([end]);
  }

  async #pipelined(commands: string[]): Promise<Replies> {
    this.socket.write(`${commands.join('\r\n')}\r\n`);
    const replies: Replies = [];
    try {
      for (let i = 0; i < commands.length; i++) replies.push(await this.read(commands[i].split(':')[0]));
    } catch (err) {
      replies.lost = err as Error;
    }
    return replies;
  }

  /** without PIPELINING: stop at the first refusal that makes the rest pointless */
  async #oneByOne(commands: string[]): Promise<Replies> {
    const replies: Replies = [];
    const last = commands.length - 1;
    for (let i = 0; i < commands.length; i++) {
      const reply = await this.command(commands[i]);
      replies.push(reply);
      if ((i === 0 && reply.code !== 250) || reply.code === 421) break;
      // DATA only when some recipient was taken
      if (i === last - 1 && !replies.slice(1).some((r) => r && r.code >= 200 && r.code < 300)) break;
    }
    return replies;
  }

  /** the transaction failed before the body: end it so the connection can carry the next one */
  async #abandon(data: Reply | undefined, err: SmtpError): Promise<never> {
    if (err.responseCode === 421) {
      this.markBroken();
      throw err;
    }
    // a server that started DATA anyway gets an empty message it must refuse (no valid recipient)
    if (data?.code === 354) {
      this.socket.write('.\r\n');
      await this.read('the end of DATA').catch(() => this.markBroken());
    }
    if (!this.hasBroken) {
      const reset = await this.command('RSET').catch(() => undefined);
      if (reset?.code !== 250) this.markBroken();
    }
    throw err;
  }
}
