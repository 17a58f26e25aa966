// DATA transparency over a real SMTP server: a message split into parts at arbitrary places, with
// dots at line starts inside parts and right after a part boundary, arrives byte-identical to the
// unsplit message after the server takes the stuffing off again.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { dataBody, stuff } from '../../src/mail/dot-stuffing.ts';
import { createSmtpMailer } from '../../src/mail/smtp.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

let sink: SmtpSink;
before(async () => {
  sink = await startSmtpSink({ parse: false });
});
after(() => sink.close());

/** a seeded generator, so a failing case can be run again */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const LINE_STARTS = ['.', '..', '.\r\n', '. ', 'a.b', '', '=2E', 'x', '...x', 'é.'];

/** header + CRLF lines, many of them starting with dots (a line of one dot too), ending in CRLF */
function message(rnd: () => number, n: number): Buffer {
  let body = `Subject: dots ${n}\r\n\r\n`;
  const lines = 1 + Math.floor(rnd() * 40);
  for (let i = 0; i < lines; i++) {
    const start = LINE_STARTS[Math.floor(rnd() * LINE_STARTS.length)];
    body += `${start}${'.ab c'.slice(0, Math.floor(rnd() * 5))}\r\n`;
  }
  return Buffer.from(body, 'utf8');
}

/** the message cut at random places, empty parts and one-byte parts included */
function split(rnd: () => number, whole: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < whole.length) {
    const len = rnd() < 0.1 ? 0 : rnd() < 0.3 ? 1 : Math.floor(rnd() * 30);
    parts.push(whole.subarray(at, at + len));
    at += len;
  }
  return parts;
}

test('random messages in random parts arrive byte-identical to the unsplit message', async () => {
  const mailer = createSmtpMailer(`${sink.url}?maxConnections=2`);
  try {
    const rnd = random(20261124);
    const sent: Buffer[] = [];
    for (let n = 0; n < 60; n++) {
      const whole = message(rnd, n);
      const parts = split(rnd, whole);
      // some parts are shared between messages (kept stuffed beside them): send each twice
      const token = `t${n}`;
      await mailer.send({ from: 'news@example.com', to: ['reader@example.com'], subject: '', headers: {}, sendToken: token, rawParts: parts });
      await mailer.send({ from: 'news@example.com', to: ['reader@example.com'], subject: '', headers: {}, sendToken: token, rawParts: parts });
      sent.push(whole, whole);
    }
    assert.equal(sink.messages.length, sent.length);
    sink.messages.forEach((m, i) => assert.equal(m.raw.toString('latin1'), sent[i].toString('latin1'), `message ${i}`));
  } finally {
    await mailer.close?.();
  }
});

test('the stuffed bytes: a dot after a boundary that ends a line, not after one mid-line; bare LF becomes CRLF', () => {
  const wire = (parts: string[]) => Buffer.concat(dataBody(parts.map((p) => Buffer.from(p))).buffers).toString();
  assert.equal(wire(['.a\r\n', '.b\r\n']), '..a\r\n..b\r\n.\r\n');
  assert.equal(wire(['x.', '.y\r\n']), 'x..y\r\n.\r\n');
  assert.equal(wire(['a\r', '\n.', '\r\n']), 'a\r\n..\r\n.\r\n');
  assert.equal(wire(['a\n.b\n', '\n', '.']), 'a\r\n..b\r\n\r\n..\r\n.\r\n');
  assert.equal(wire(['no end']), 'no end\r\n.\r\n');
  assert.equal(wire([]), '.\r\n');
  const plain = Buffer.from('nothing to do\r\nhere\r\n');
  assert.equal(stuff(plain).bytes, plain, 'a part that needs nothing is the part itself');
  assert.equal(dataBody([Buffer.from('ascii')]).eightBit, false);
  assert.equal(dataBody([Buffer.from('a'), Buffer.from('é')]).eightBit, true);
});
