import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { simpleParser } from 'mailparser';
import { createNotify } from '../../src/notify.ts';
import { createSesMailer } from '../../src/mail/ses.ts';
import { freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

test('outbox:<dir> writes each message as a complete .eml file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-outbox-'));
  const db = freshDatabaseUrl('sqlite');
  const notify = await createNotify(testOptions(db.url, { mailer: `outbox:${join(dir, 'out')}` }));
  try {
    const rec = await notify.send({ to: 'eml@example.com', subject: 'Saved é', markdown: '# Hi\n\n[x](https://example.com)' });
    assert.equal(rec.status, 'sent');
    const files = readdirSync(join(dir, 'out'));
    assert.equal(files.length, 1);
    assert.match(files[0], new RegExp(`${rec.token}\\.eml$`));
    const parsed = await simpleParser(readFileSync(join(dir, 'out', files[0])));
    assert.equal(parsed.subject, 'Saved é');
    assert.equal(parsed.messageId, rec.message_id);
    assert.match(parsed.html as string, /notify\/click\//);
  } finally {
    await notify.close();
    db.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SES mailer: one SigV4-signed SESv2 raw SendEmail per message; an error answer is a failed send', async () => {
  const calls: { url: string; init: RequestInit }[] = [];
  let status = 200;
  const fakeFetch = (async (url: URL, init: RequestInit) => {
    calls.push({ url: String(url), init });
    return new Response(status === 200 ? JSON.stringify({ MessageId: 'ses-123' }) : '{"message":"Throttling"}', { status });
  }) as unknown as typeof fetch;
  const ses = createSesMailer({ region: 'eu-west-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', fetch: fakeFetch, now: () => Date.UTC(2026, 0, 2, 3, 4, 5) });
  const result = await ses.send({ from: 'News <news@example.com>', to: ['a@example.com'], bcc: ['b@example.com'], subject: 'S', html: '<p>x</p>', text: 'x', headers: {}, sendToken: 'tok' });
  assert.deepEqual(result, { messageId: 'ses-123' });
  const { url, init } = calls[0];
  assert.equal(url, 'https://email.eu-west-1.amazonaws.com/v2/email/outbound-emails');
  const headers = init.headers as Record<string, string>;
  assert.equal(headers['x-amz-date'], '20260102T030405Z');
  assert.match(headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20260102\/eu-west-1\/ses\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/);
  const body = JSON.parse(String(init.body));
  assert.equal(body.FromEmailAddress, 'news@example.com');
  assert.deepEqual(body.Destination.BccAddresses, ['b@example.com']);
  const raw = Buffer.from(body.Content.Raw.Data, 'base64').toString();
  assert.match(raw, /^From: News <news@example\.com>\r\n/);
  assert.doesNotMatch(raw, /^Bcc:/m);
  status = 400;
  await assert.rejects(ses.send({ from: 'news@example.com', to: ['a@example.com'], subject: 'S', text: 'x', headers: {}, sendToken: 'tok' }), /SES answered 400/);
  await assert.rejects(createSesMailer({}).send({ from: 'n@example.com', to: ['a@example.com'], subject: 'S', text: 'x', headers: {}, sendToken: 't' }), /AWS_REGION/);
});

test('throttleMs sleeps between the sends of a batch', async () => {
  const sink = await startSmtpSink({ parse: false });
  const db = freshDatabaseUrl('sqlite');
  const notify = await createNotify(testOptions(db.url, { mailer: sink.url, throttleMs: 40 }));
  try {
    for (let i = 0; i < 4; i++) await notify.contacts.upsert({ email: `th${i}@example.com`, lists: ['th'] });
    const c = await notify.campaigns.create({ subject: 'Slow', html: '<p>x</p>', list: 'th' });
    const seen: number[] = [];
    const start = performance.now();
    const r = await notify.campaigns.send(c.id, { onProgress: (p) => seen.push(p.sent) });
    assert.equal(r.sent, 4);
    assert.ok(performance.now() - start >= 3 * 40, 'three pauses between four sends');
    assert.equal(seen[0], 0);
    assert.equal(seen[seen.length - 1], 4);
  } finally {
    await notify.close();
    await sink.close();
    db.cleanup();
  }
});
