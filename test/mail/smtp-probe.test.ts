// The EHLO probe that tells whether an SMTP server offers SMTPUTF8: against smtp-server (plain,
// STARTTLS, implicit TLS), a server that never answers, one that refuses, and Postfix when the
// test infrastructure runs it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { after, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { smtpExtensions } from '../../src/mail/smtp-probe.ts';

const servers: { close(cb: () => void): void }[] = [];
after(() => Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))));

async function listen(options: ConstructorParameters<typeof SMTPServer>[0]): Promise<number> {
  const server = new SMTPServer({ authOptional: true, logger: false, ...options });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.server.address() as net.AddressInfo).port;
}

async function raw(answer: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer(answer);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as net.AddressInfo).port;
}

test('plain: SMTPUTF8 offered or hidden, with the EHLO name given', async () => {
  let said = '';
  const offers = await listen({ disabledCommands: ['STARTTLS', 'AUTH'], onConnect: (_s, cb) => cb() });
  const hides = await listen({
    disabledCommands: ['STARTTLS', 'AUTH'],
    hideSMTPUTF8: true,
    onMailFrom(_a, s, cb) {
      said = s.hostNameAppearsAs;
      cb();
    },
  });
  assert.ok((await smtpExtensions({ host: '127.0.0.1', port: offers, secure: false, name: 'mail.news.example' })).has('SMTPUTF8'));
  const hidden = await smtpExtensions({ host: '127.0.0.1', port: hides, secure: false });
  assert.equal(hidden.has('SMTPUTF8'), false);
  assert.ok(hidden.has('8BITMIME') && hidden.has('PIPELINING'), [...hidden].join(' '));
  assert.equal(said, '', 'the probe sends no mail');
});

test('STARTTLS is used when offered and the answer after TLS counts; implicit TLS too', async () => {
  const starttls = await listen({ disabledCommands: ['AUTH'] });
  const after = await smtpExtensions({ host: '127.0.0.1', port: starttls, secure: false, rejectUnauthorized: false });
  assert.ok(after.has('SMTPUTF8'));
  assert.equal(after.has('STARTTLS'), false, 'the EHLO answer after TLS no longer offers STARTTLS');
  // smtp-server's own certificate is self-signed: refused unless told otherwise
  await assert.rejects(smtpExtensions({ host: '127.0.0.1', port: starttls, secure: false }), /self.signed|certificate/i);
  const smtps = await listen({ secure: true, disabledCommands: ['AUTH'] });
  assert.ok((await smtpExtensions({ host: '127.0.0.1', port: smtps, secure: true, rejectUnauthorized: false })).has('SMTPUTF8'));
});

test('bad servers: refused, silent, a 554 greeting, HELO only, closed mid-answer', async () => {
  const closed = await raw((s) => s.destroy());
  await assert.rejects(smtpExtensions({ host: '127.0.0.1', port: closed, secure: false }), (e: Error & { code?: string }) => e.code === 'ECONNECTION' || e.code === 'ECONNRESET');
  const silent = await raw(() => {});
  await assert.rejects(smtpExtensions({ host: '127.0.0.1', port: silent, secure: false, timeoutMs: 300 }), (e: Error & { code?: string }) => e.code === 'ETIMEDOUT');
  const busy = await raw((s) => s.end('554 5.3.2 no service\r\n'));
  await assert.rejects(smtpExtensions({ host: '127.0.0.1', port: busy, secure: false }), /554/);
  const heloOnly = await raw((s) => {
    s.write('220 old.example\r\n');
    s.on('data', (d) => s.write(String(d).startsWith('EHLO') ? '502 5.5.1 EHLO not implemented\r\n' : String(d).startsWith('HELO') ? '250 old.example\r\n' : '221 bye\r\n'));
  });
  assert.deepEqual([...(await smtpExtensions({ host: '127.0.0.1', port: heloOnly, secure: false }))], []);
  const halfway = await raw((s) => {
    s.write('220 x\r\n');
    s.once('data', () => s.end('250-x\r\n250-SMTPUTF8\r\n'));
  });
  await assert.rejects(smtpExtensions({ host: '127.0.0.1', port: halfway, secure: false }), (e: Error & { code?: string }) => e.code === 'ECONNECTION');
  const refused = await raw((s) => s.destroy());
  servers.pop()?.close(() => {});
  await new Promise((r) => setTimeout(r, 50));
  await assert.rejects(smtpExtensions({ host: '127.0.0.1', port: refused, secure: false }), (e: Error & { code?: string }) => e.code === 'ECONNREFUSED');
});

/** The Postfix of scripts/imap-test-server.sh, when it runs (NOTIFY_TEST_IMAP_DIR set and Postfix installed). */
function postfixUrl(): string {
  if (!process.env.NOTIFY_TEST_IMAP_DIR) return '';
  try {
    return execFileSync('scripts/imap-test-server.sh', ['postfix-url'], { encoding: 'utf8', env: process.env }).trim();
  } catch {
    return '';
  }
}

test('Postfix: the probe reads the same extensions Postfix says to a plain EHLO', { skip: !postfixUrl() && 'Postfix is not running' }, async () => {
  const url = new URL(postfixUrl());
  const port = Number(url.port);
  const extensions = await smtpExtensions({ host: url.hostname, port, secure: false, rejectUnauthorized: false });
  // Postfix 3 offers SMTPUTF8 unless smtputf8_enable = no
  const said = await new Promise<string>((resolve, reject) => {
    const s = net.connect(port, url.hostname);
    let text = '';
    s.on('data', (d) => {
      text += d;
      if (/^220 /m.test(text) && !text.includes('EHLO-SENT')) {
        text += 'EHLO-SENT\n';
        s.write('EHLO probe.test\r\n');
      } else if (/^250 /m.test(text)) {
        s.end('QUIT\r\n');
        resolve(text);
      }
    });
    s.on('error', reject);
  });
  assert.equal(extensions.has('SMTPUTF8'), /^250[- ]SMTPUTF8\b/m.test(said), said);
  assert.ok(extensions.has('PIPELINING'));
});
