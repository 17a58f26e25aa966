// notify's SMTP client against real servers (smtp-server) and scripted ones (node:net): TLS, AUTH,
// refusals at each step and how they are classified, a connection lost mid-DATA, servers without
// PIPELINING, pool reuse and limits, timeouts, and option checks.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { classifyFailure } from '../../src/core/failure.ts';
import { isNotifyError } from '../../src/errors.ts';
import type { Mailer, OutgoingMessage } from '../../src/mail/contract.ts';
import { createSmtpMailer } from '../../src/mail/smtp.ts';

const closers: (() => Promise<void>)[] = [];
after(() => Promise.all(closers.map((c) => c())));

interface Received {
  from: string;
  to: string[];
  raw: Buffer;
  secure: boolean;
  user?: string;
}

/** smtp-server on a free port, recording messages and connections; `options` as smtp-server takes them */
async function server(options: SMTPServerOptions = {}): Promise<{ port: number; received: Received[]; connections: () => number }> {
  const received: Received[] = [];
  let connections = 0;
  const s = new SMTPServer({
    authOptional: true,
    logger: false,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onConnect(_session, cb) {
      connections++;
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          secure: session.secure,
          user: session.user as string | undefined,
        });
        cb();
      });
    },
    ...options,
  });
  s.on('error', () => {});
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((r) => s.close(() => r())));
  return { port: (s.server.address() as net.AddressInfo).port, received, connections: () => connections };
}

type Script = (socket: net.Socket, line: string, lines: string[]) => void;

/**
 * a server that speaks whatever the script of each connection says: it gets each line the client
 * sent (data included); `connection` is 1 for the first connection
 */
async function scripted(scriptFor: (connection: number) => Script, greeting = '220 scripted.example ESMTP\r\n'): Promise<{ port: number; chunks: string[]; times: number[] }> {
  const chunks: string[] = [];
  /** when each chunk arrived (performance.now()) */
  const times: number[] = [];
  let connections = 0;
  const srv = net.createServer((socket) => {
    const script = scriptFor(++connections);
    const lines: string[] = [];
    let pending = '';
    socket.on('error', () => {});
    if (greeting) socket.write(greeting);
    socket.on('data', (d) => {
      chunks.push(d.toString('latin1'));
      times.push(performance.now());
      pending += d.toString('latin1');
      let end = pending.indexOf('\r\n');
      while (end >= 0) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 2);
        lines.push(line);
        if (!socket.destroyed) script(socket, line, lines);
        end = pending.indexOf('\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((r) => srv.close(() => r())));
  return { port: (srv.address() as net.AddressInfo).port, chunks, times };
}

/** a plain ESMTP conversation; `data` answers the end of DATA, `ext` the EHLO keywords */
function esmtp(o: { ext?: string[]; data?: (socket: net.Socket) => void } = {}) {
  let inData = false;
  return (socket: net.Socket, line: string) => {
    if (inData) {
      if (line !== '.') return;
      inData = false;
      if (o.data) o.data(socket);
      else socket.write('250 2.0.0 queued\r\n');
      return;
    }
    const verb = line.split(/[ :]/)[0].toUpperCase();
    if (verb === 'EHLO') {
      const said = ['scripted.example', ...(o.ext ?? ['PIPELINING', '8BITMIME'])];
      socket.write(said.map((l, i) => `250${i === said.length - 1 ? ' ' : '-'}${l}\r\n`).join(''));
    } else if (verb === 'DATA') {
      inData = true;
      socket.write('354 go ahead\r\n');
    } else if (verb === 'QUIT') socket.end('221 bye\r\n');
    else socket.write('250 ok\r\n');
  };
}

let seq = 0;
const msg = (over: Partial<OutgoingMessage> = {}): OutgoingMessage => ({
  from: 'news@example.com',
  to: ['reader@example.com'],
  subject: `client ${++seq}`,
  text: `body ${seq}\n`,
  headers: {},
  sendToken: `tok${seq}`,
  ...over,
});

function mailer(url: string, smtpName?: string): Mailer {
  const m = createSmtpMailer(url, { smtpName });
  closers.push(() => m.close?.() ?? Promise.resolve());
  return m;
}

/** the error a send failed with, and how notify classifies it */
async function failure(m: Mailer, message = msg()) {
  const err = await m.send(message).then(
    () => assert.fail('the send should have failed'),
    (e: Error & { code?: string; responseCode?: number }) => e,
  );
  return { err, ...classifyFailure(err) };
}

describe('TLS and AUTH', () => {
  test('STARTTLS when offered, to a self-signed server with rejectUnauthorized=false; refused without it', async () => {
    const s = await server({ disabledCommands: ['AUTH'] });
    await mailer(`smtp://127.0.0.1:${s.port}?rejectUnauthorized=false`).send(msg());
    assert.equal(s.received.length, 1);
    assert.equal(s.received[0].secure, true, 'the message went over TLS');
    const f = await failure(mailer(`smtp://127.0.0.1:${s.port}`));
    assert.match(f.err.message, /self.signed|certificate/i);
    assert.equal(s.received.length, 1);
  });

  test('smtps:// is TLS from the first byte', async () => {
    const s = await server({ secure: true, disabledCommands: ['AUTH'] });
    await mailer(`smtps://127.0.0.1:${s.port}?rejectUnauthorized=false`).send(msg());
    assert.equal(s.received[0].secure, true);
  });

  for (const method of ['PLAIN', 'LOGIN']) {
    test(`AUTH ${method} with the URL's user and password (percent-decoded); a wrong password is a permanent 535`, async () => {
      const s = await server({
        disabledCommands: ['STARTTLS'],
        allowInsecureAuth: true,
        authOptional: false,
        authMethods: [method],
        onAuth(auth, _session, cb) {
          if (auth.method === method && auth.username === 'ann@example.com' && auth.password === 'p@ss:wörd') return cb(null, { user: auth.username });
          cb(Object.assign(new Error('bad credentials'), { responseCode: 535 }));
        },
      });
      await mailer(`smtp://ann%40example.com:${encodeURIComponent('p@ss:wörd')}@127.0.0.1:${s.port}`).send(msg());
      assert.equal(s.received[0].user, 'ann@example.com');
      const f = await failure(mailer(`smtp://ann%40example.com:nope@127.0.0.1:${s.port}`));
      assert.equal(f.err.responseCode, 535);
      assert.deepEqual([f.err.code, f.transient, f.final], ['EAUTH', false, true]);
      assert.equal(s.received.length, 1);
    });
  }
});

describe('refusals and lost connections', () => {
  test('a 421 greeting is transient, with the reply as the reason', async () => {
    const s = await scripted(() => () => {}, '421 4.3.2 too busy, come back later\r\n');
    const f = await failure(mailer(`smtp://127.0.0.1:${s.port}`));
    assert.equal(f.err.responseCode, 421);
    assert.equal(f.transient, true);
    assert.match(f.reason, /421 4\.3\.2 too busy/);
  });

  for (const [step, hook] of [
    ['MAIL FROM', 'onMailFrom'],
    ['RCPT TO', 'onRcptTo'],
    ['DATA', 'onData'],
  ] as const) {
    test(`${step}: a 451 is transient, a 550 permanent, and the same connection carries the next message`, async () => {
      let answer = 0;
      const s = await server({
        [hook]: (_a: unknown, _session: unknown, cb: (err?: Error | null) => void) => {
          if (hook === 'onData') {
            const stream = _a as NodeJS.ReadableStream;
            stream.on('data', () => {});
            stream.on('end', () => (answer ? cb(Object.assign(new Error(`no ${answer}`), { responseCode: answer })) : cb()));
          } else cb(answer ? Object.assign(new Error(`no ${answer}`), { responseCode: answer }) : null);
        },
      });
      const m = mailer(`smtp://127.0.0.1:${s.port}?maxConnections=1`);
      answer = 451;
      const soft = await failure(m);
      assert.deepEqual([soft.err.responseCode, soft.transient, soft.final], [451, true, false]);
      answer = 550;
      const hard = await failure(m);
      assert.deepEqual([hard.err.responseCode, hard.transient, hard.final], [550, false, true]);
      assert.match(hard.reason, /550/);
      answer = 0;
      assert.notEqual(await m.send(msg()), false);
      assert.equal(s.connections(), 1, 'one connection all along (RSET after each refusal)');
    });
  }

  test('some recipients refused: sent to the others; all refused: failed with the last refusal', async () => {
    const s = await server({ onRcptTo: (a, _s, cb) => cb(a.address.startsWith('no') ? Object.assign(new Error('unknown user'), { responseCode: 550 }) : null) });
    const m = mailer(`smtp://127.0.0.1:${s.port}`);
    await m.send(msg({ to: ['yes@example.com', 'no@example.com'], cc: ['yes2@example.com'] }));
    assert.deepEqual(s.received[0].to, ['yes@example.com', 'yes2@example.com']);
    const all = await failure(m, msg({ to: ['no1@example.com', 'no2@example.com'] }));
    assert.deepEqual([all.err.responseCode, all.err.code, all.final], [550, 'EENVELOPE', true]);
    assert.equal(s.received.length, 1);
  });

  test('the connection dropped mid-DATA: a transient connection error, not sent again; the next message opens a new connection', async () => {
    const s = await scripted((connection) => {
      const speak = esmtp();
      return (socket, line, lines) => {
        // the first connection dies once the body has started
        if (connection === 1 && lines.includes('DATA') && line.startsWith('Subject')) return void socket.destroy();
        speak(socket, line);
      };
    });
    const m = mailer(`smtp://127.0.0.1:${s.port}?maxConnections=1`);
    const f = await failure(m);
    assert.equal(f.err.code, 'ECONNECTION');
    assert.equal(f.transient, true);
    assert.notEqual(await m.send(msg()), false);
    assert.equal(s.chunks.join('').split('MAIL FROM').length - 1, 2, 'one MAIL FROM per message: the lost one was not tried again');
  });

  for (const close of [true, false]) {
    test(`a server that says 421 to an idle connection${close ? ' and closes it' : ''}: the next message gets a new connection`, async () => {
      let connections = 0;
      const s = await scripted(() => {
        connections++;
        return esmtp({
          data(socket) {
            socket.write('250 queued\r\n');
            setTimeout(() => (close ? socket.end('421 4.4.2 idle too long\r\n') : socket.write('421 4.4.2 idle too long\r\n')), 50);
          },
        });
      });
      const m = mailer(`smtp://127.0.0.1:${s.port}?maxConnections=1`);
      await m.send(msg());
      await new Promise((r) => setTimeout(r, 200));
      await m.send(msg());
      assert.equal(connections, 2);
      assert.equal(s.chunks.join('').split('MAIL FROM').length - 1, 2);
    });
  }
});

describe('PIPELINING, pool, timeouts', () => {
  test('PIPELINING offered: MAIL FROM, RCPT TO and DATA in one write; not offered: one command per write', async () => {
    const on = await scripted(() => esmtp({ ext: ['PIPELINING', '8BITMIME'] }));
    await mailer(`smtp://127.0.0.1:${on.port}`).send(msg({ to: ['a@example.com', 'b@example.com'] }));
    assert.ok(
      on.chunks.some((c) => c === 'MAIL FROM:<news@example.com>\r\nRCPT TO:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n'),
      on.chunks.join('|'),
    );
    const off = await scripted(() => esmtp({ ext: ['8BITMIME'] }));
    await mailer(`smtp://127.0.0.1:${off.port}`).send(msg({ to: ['a@example.com', 'b@example.com'] }));
    const commands = off.chunks.filter((c) => /^(MAIL|RCPT|DATA)/.test(c));
    assert.deepEqual(commands, ['MAIL FROM:<news@example.com>\r\n', 'RCPT TO:<a@example.com>\r\n', 'RCPT TO:<b@example.com>\r\n', 'DATA\r\n']);
    const real = await server({ hidePIPELINING: true } as SMTPServerOptions);
    await mailer(`smtp://127.0.0.1:${real.port}`).send(msg());
    assert.equal(real.received.length, 1);
  });

  test('EHLO says smtpName; a server that refuses EHLO gets HELO', async () => {
    const heloOnly = await scripted(() => {
      const speak = esmtp();
      return (socket, line) => (line.startsWith('EHLO') ? socket.write('502 5.5.1 no EHLO\r\n') : speak(socket, line));
    });
    await mailer(`smtp://127.0.0.1:${heloOnly.port}`, 'mail.news.example').send(msg());
    const said = heloOnly.chunks.join('');
    assert.match(said, /^EHLO mail\.news\.example\r\nHELO mail\.news\.example\r\nMAIL FROM:<news@example\.com>\r\n/);
  });

  test('at most maxConnections connections, reused across messages', async () => {
    const s = await server();
    const m = mailer(`smtp://127.0.0.1:${s.port}?maxConnections=3`);
    await Promise.all(Array.from({ length: 30 }, () => m.send(msg())));
    await Promise.all(Array.from({ length: 10 }, () => m.send(msg())));
    assert.equal(s.received.length, 40);
    assert.equal(s.connections(), 3);
  });

  test('timeouts: a silent greeting, a server that stops answering after DATA, connect', async () => {
    const silent = await scripted(() => () => {}, '');
    const g = await failure(mailer(`smtp://127.0.0.1:${silent.port}?greetingTimeout=200`));
    assert.deepEqual([g.err.code, g.transient], ['ETIMEDOUT', true]);
    assert.match(g.err.message, /did not answer greeting within 200 ms/);
    const stuck = await scripted(() => esmtp({ data: () => {} }));
    const d = await failure(mailer(`smtp://127.0.0.1:${stuck.port}?socketTimeout=200`));
    assert.deepEqual([d.err.code, d.transient], ['ETIMEDOUT', true]);
    assert.match(d.err.message, /the end of DATA/);
  });

  test('an idle connection is closed with QUIT after idleTimeout, not before', async () => {
    const IDLE = 200;
    const s = await scripted(() => esmtp());
    const m = mailer(`smtp://127.0.0.1:${s.port}?idleTimeout=${IDLE}`);
    await m.send(msg());
    // the end of the message reached the server before the client got its 250 and went idle
    const dataEnd = s.times[s.chunks.findIndex((c) => c.endsWith('\r\n.\r\n'))];
    // a loaded machine only delays the timer: wait for the QUIT as long as it takes, up to 30 s
    for (const until = performance.now() + 30_000; !s.chunks.includes('QUIT\r\n') && performance.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    const quit = s.chunks.indexOf('QUIT\r\n');
    assert.equal(quit, s.chunks.length - 1, `QUIT, and nothing after it: ${JSON.stringify(s.chunks.slice(-3))}`);
    // both times are the server's clock: the QUIT came the idle time after the message at the
    // earliest (less 5 ms: a timer measures from the event loop's cached time, up to a tick early)
    assert.ok(s.times[quit] - dataEnd >= IDLE - 5, `QUIT ${Math.round(s.times[quit] - dataEnd)} ms after the message, before idleTimeout ${IDLE}`);
  });

  test('SMTPUTF8: asked of the connection; a server without it gets nothing and the send says why', async () => {
    const s = await server({ hideSMTPUTF8: true });
    const f = await failure(mailer(`smtp://127.0.0.1:${s.port}`), msg({ to: ['zoë@example.com'] }));
    assert.ok(isNotifyError(f.err, 'SMTPUTF8_REQUIRED'), f.err.message);
    assert.equal(s.received.length, 0);
  });

  test('the envelope writes each domain in lower case, the local part as given', async () => {
    const s = await server();
    const m = mailer(`smtp://127.0.0.1:${s.port}`);
    const sent = await m.send(msg({ envelopeFrom: 'Bounces@News.Example.COM', to: ['Reader0@Gmail.com', 'Ann@Example.ORG'] }));
    assert.ok(sent);
    assert.equal(s.received[0].from, 'Bounces@news.example.com');
    assert.deepEqual(s.received[0].to, ['Reader0@gmail.com', 'Ann@example.org']);
  });

  test('bad envelopes are refused before anything is sent: CR/LF or brackets in an address, no recipient', async () => {
    const s = await server();
    const m = mailer(`smtp://127.0.0.1:${s.port}`);
    const cases: [Partial<OutgoingMessage>, 'INVALID_EMAIL' | 'INVALID_INPUT'][] = [
      [{ to: ['a@example.com>\r\nRCPT TO:<b@example.com'] }, 'INVALID_EMAIL'],
      [{ envelopeFrom: 'x@example.com\nDATA' }, 'INVALID_EMAIL'],
      [{ to: [] }, 'INVALID_INPUT'],
    ];
    for (const [over, code] of cases) {
      const f = await failure(m, msg(over));
      assert.ok(isNotifyError(f.err, code), f.err.message);
    }
    assert.equal(s.connections(), 0);
  });

  test('bad URL options are CONFIG_INVALID naming the option', () => {
    for (const [q, why] of [
      ['maxConnections=0', /maxConnections/],
      ['maxConnections=many', /maxConnections/],
      ['socketTimeout=-5', /socketTimeout/],
      ['idleTimeout=1.5', /idleTimeout/],
      ['pool=true', /unknown SMTP URL option 'pool'/],
    ] as const) {
      assert.throws(
        () => createSmtpMailer(`smtp://127.0.0.1:25?${q}`),
        (e) => isNotifyError(e, 'CONFIG_INVALID') && why.test(e.message),
        q,
      );
    }
  });
});

/** a `ready` promise the test settles */
function readyGate() {
  let settle!: (go: boolean) => void;
  let fail!: (err: Error) => void;
  const ready = new Promise<boolean>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  return { ready, settle, fail };
}

/** polls until `done` (load-aware: a generous deadline, never a fixed sleep) */
async function until(done: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !done(); await new Promise((r) => setTimeout(r, 5))) if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
}

describe('sendWhen: the end of DATA waits for ready', () => {
  test('the envelope and the body go out at once; the end-of-data line, and so the message, only once ready says true', async () => {
    const s = await scripted(() => esmtp());
    const m = mailer(`smtp://127.0.0.1:${s.port}`);
    const gate = readyGate();
    const sent = m.sendWhen!(msg({ text: 'held body\n' }), gate.ready);
    await until(() => s.chunks.join('').includes('held body'), 'the body');
    assert.doesNotMatch(s.chunks.join(''), /\r\n\.\r\n/, 'no end of DATA before ready');
    gate.settle(true);
    await sent;
    assert.match(s.chunks.join(''), /held body\r\n\.\r\n/);
    const real = await server();
    const r = mailer(`smtp://127.0.0.1:${real.port}`);
    const later = readyGate();
    const taken = r.sendWhen!(msg({ subject: 'taken later' }), later.ready);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(real.received.length, 0, 'the server has not taken it');
    later.settle(true);
    await taken;
    assert.deepEqual(
      real.received.map((x) => /Subject: (.*)/.exec(x.raw.toString())?.[1]),
      ['taken later'],
    );
  });

  test('ready says false: NOT_RELEASED, the server never takes it, the connection is closed and the next message gets a new one', async () => {
    const s = await server();
    const m = mailer(`smtp://127.0.0.1:${s.port}?maxConnections=1`);
    const gate = readyGate();
    const held = m.sendWhen!(msg({ subject: 'held back' }), gate.ready);
    await new Promise((resolve) => setTimeout(resolve, 50));
    gate.settle(false);
    await assert.rejects(held, (e) => isNotifyError(e, 'NOT_RELEASED'));
    await m.send(msg({ subject: 'next' }));
    await until(() => s.connections() === 2, 'a second connection');
    assert.deepEqual(
      s.received.map((x) => /Subject: (.*)/.exec(x.raw.toString())?.[1]),
      ['next'],
    );
  });

  test('ready rejects (the commit failed): the send fails with that error and nothing is taken', async () => {
    const s = await server();
    const m = mailer(`smtp://127.0.0.1:${s.port}`);
    const gate = readyGate();
    const held = m.sendWhen!(msg(), gate.ready);
    gate.fail(new Error('database went away'));
    await assert.rejects(held, /database went away/);
    await m.send(msg({ subject: 'after' }));
    assert.equal(s.received.length, 1);
  });

  test('concurrency is the pool size, maxConnections', () => {
    assert.equal(createSmtpMailer('smtp://127.0.0.1:2525').concurrency, 5);
    assert.equal(createSmtpMailer('smtp://127.0.0.1:2525?maxConnections=2').concurrency, 2);
  });
});
