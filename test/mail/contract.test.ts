import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AddressObject, simpleParser } from 'mailparser';
import type { Mailer, OutgoingMessage } from '../../src/mail/contract.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { quiet, settlesTo } from '../helpers/handles.ts';
import { customObject, type FarSide, logLines, outboxFolder, sesApi, smtpSink, smtpTlsAuthSink } from './far-sides.ts';

/**
 * One contract for every mail transport. A transport joins by adding one line below: a function
 * that starts its far side (see far-sides.ts) and builds the transport through the registry.
 */
const CASES: { name: string; make: () => Promise<FarSide> }[] = [
  { name: 'smtp', make: smtpSink },
  { name: 'smtp over STARTTLS with AUTH', make: smtpTlsAuthSink },
  { name: 'outbox', make: outboxFolder },
  { name: 'log', make: logLines },
  { name: 'ses', make: sesApi },
  { name: 'custom Mailer object', make: customObject },
];

let seq = 0;
/** A subject of its own per message (non-ASCII, so encoded words are exercised). */
const subject = () => `Contract ${++seq}: café ✓`;

/** A transport that also remembers what it was handed, so arrivals can be compared with it. */
function recording(mailer: Mailer): { mailer: Mailer; handed: OutgoingMessage[] } {
  const handed: OutgoingMessage[] = [];
  return {
    handed,
    mailer: {
      name: mailer.name,
      send(m) {
        handed.push(m);
        return mailer.send(m);
      },
      close: () => mailer.close?.() ?? Promise.resolve(),
    },
  };
}

async function arrivalOf(far: FarSide, subject: string) {
  return (await far.arrivals()).filter((a) => a.subject === subject);
}

for (const c of CASES) {
  describe(`mail transport contract: ${c.name}`, () => {
    let far: FarSide;
    const db = freshDatabaseUrl('sqlite');
    before(async () => {
      far = await c.make();
    });
    after(async () => {
      await far?.dispose();
      db.cleanup();
    });

    /** An instance whose mailer option is the transport object (closed with the instance). */
    async function notifyWith(mailer: Mailer): Promise<Notify> {
      return createNotify(testOptions(db.url, { mailer }));
    }

    test('a message the dispatcher built arrives byte-identical', async () => {
      const t = recording(far.open());
      const notify = await notifyWith(t.mailer);
      try {
        const s = subject();
        const record = await notify.send({ to: 'reader@example.com', subject: s, markdown: '# Hello\n\n[a link](https://example.com/x)' });
        assert.equal(record.status, 'sent');
        const handed = t.handed[0];
        assert.ok(handed.raw, 'the dispatcher hands over the complete message');
        const [arrival] = await arrivalOf(far, s);
        assert.ok(arrival, 'arrived');
        if (arrival.raw) assert.equal(arrival.raw.toString('latin1'), handed.raw.toString('latin1'));
        if (arrival.recipients) assert.deepEqual(arrival.recipients, ['reader@example.com']);
        if (arrival.sendToken) assert.equal(arrival.sendToken, record.token);
      } finally {
        await notify.close();
      }
    });

    test('a message without raw bytes parses to the same headers and bodies', async () => {
      const mailer = far.open();
      try {
        const s = subject();
        const message: OutgoingMessage = {
          from: '"Zoë News" <news@example.com>',
          to: ['ann@example.com'],
          cc: ['bob@example.com'],
          bcc: ['hidden@example.com'],
          subject: s,
          text: 'Plain body é\n',
          html: '<p>HTML body é</p>\n',
          headers: { 'X-Campaign': 'contract', 'List-Unsubscribe': '<https://example.com/u/1>' },
          sendToken: `tok${seq}`,
        };
        const result = await mailer.send(message);
        assert.notEqual(result, false);
        const [arrival] = await arrivalOf(far, s);
        assert.ok(arrival, 'arrived');
        if (arrival.recipients) assert.deepEqual(arrival.recipients, ['ann@example.com', 'bob@example.com', 'hidden@example.com']);
        if (arrival.sendToken) assert.equal(arrival.sendToken, message.sendToken);
        if (!arrival.raw) return;
        const parsed = await simpleParser(arrival.raw);
        assert.deepEqual(parsed.from?.value, [{ address: 'news@example.com', name: 'Zoë News' }]);
        assert.equal((parsed.to as AddressObject).text, 'ann@example.com');
        assert.equal((parsed.cc as AddressObject).text, 'bob@example.com');
        assert.equal(parsed.bcc, undefined, 'Bcc is never written into the message');
        assert.equal(parsed.text?.trim(), 'Plain body é');
        assert.equal((parsed.html as string).trim(), '<p>HTML body é</p>');
        assert.equal(parsed.headers.get('x-campaign'), 'contract');
        assert.equal(parsed.headerLines.find((h) => h.key === 'list-unsubscribe')?.line, 'List-Unsubscribe: <https://example.com/u/1>');
      } finally {
        await mailer.close?.();
      }
    });

    test('a refusal is a failed send, nothing arrives, and the next message goes through', async (ctx) => {
      if (!far.refuse) return ctx.skip('this transport has no far side that could refuse');
      const notify = await notifyWith(far.open());
      try {
        const undo = await far.refuse();
        const refused = subject();
        let record: Awaited<ReturnType<Notify['send']>>;
        try {
          record = await notify.send({ to: 'reader@example.com', subject: refused, text: 'x' });
        } finally {
          await undo();
        }
        assert.equal(record.status, 'failed');
        assert.deepEqual(await arrivalOf(far, refused), []);
        const next = subject();
        assert.equal((await notify.send({ to: 'reader@example.com', subject: next, text: 'y' })).status, 'sent');
        assert.equal((await arrivalOf(far, next)).length, 1);
      } finally {
        await notify.close();
      }
    });

    test('close() releases every connection and timer the transport opened', async () => {
      const baseline = await quiet();
      const mailer = far.open();
      const s = subject();
      await mailer.send({ from: 'news@example.com', to: ['reader@example.com'], subject: s, text: 'x', headers: {}, sendToken: `tok${seq}` });
      assert.equal((await arrivalOf(far, s)).length, 1);
      await mailer.close?.();
      assert.deepEqual(await settlesTo(baseline), baseline);
    });
  });
}
