import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { AJAX, capture, confirmLink, recordingMailer } from './helpers.ts';

/*
 * What a capture post and its confirmation email do that the other capture tests leave unread: the
 * contact's row after posts about known addresses, the greeting and headers of the email as it
 * arrives over SMTP, the limits of a post at their exact edge, and the answers' messages.
 */

const post = (n: Notify, fields: Record<string, string> | URLSearchParams, headers: Record<string, string> = {}) =>
  capture(n, (fields instanceof URLSearchParams ? fields : new URLSearchParams(fields)).toString(), { ...AJAX, ...headers });
const answer = async (res: Response) => ({ status: res.status, body: await res.json() });
const refused = (code: string, message: string) => ({ status: 422, body: { ok: false, code, errors: [message] } });
const OK = { status: 200, body: { ok: true, message: 'Thanks for subscribing!' } };
const from = (path: string) => ({ referer: `http://localhost:3000${path}` });
const sentTo = (sink: SmtpSink, email: string) => sink.messages.filter((m) => m.envelope.to.some((to) => to.toLowerCase() === email));

forEachEngine('capture without double opt-in: known addresses', (h) => {
  const mailer = recordingMailer();
  const lists = ['news', '2024 intake', ...Array.from({ length: 11 }, (_, i) => `l${i + 1}`)];
  const notify = useNotify(h, { mailer, captureRateLimit: 0, captureLists: lists });

  test('a bounced or complained address gains no list, name or attribute and is sent nothing', async () => {
    for (const status of ['bounced', 'complained'] as const) {
      const email = `${status}@example.com`;
      await notify().contacts.upsert({ email, status });
      assert.deepEqual(await answer(await post(notify(), { email, name: 'Posted', list: 'news', plan: 'pro' })), OK);
      const c = await notify().contacts.get(email);
      assert.deepEqual({ status: c?.status, name: c?.name, lists: c?.lists, attributes: c?.attributes }, { status, name: null, lists: [], attributes: {} });
    }
    assert.equal(mailer.sent.length, 0);
  });

  test('with double opt-in off, a pending or transactional address is subscribed at once and sent nothing', async () => {
    for (const status of ['pending', 'transactional'] as const) {
      const email = `was-${status}@example.com`;
      await notify().contacts.upsert({ email, status });
      assert.deepEqual(await answer(await post(notify(), { email, list: 'news' })), OK);
      const c = await notify().contacts.get(email);
      assert.deepEqual({ status: c?.status, lists: c?.lists }, { status: 'subscribed', lists: ['news'] }, status);
    }
    assert.equal(mailer.sent.length, 0);
  });

  test('a subscribed contact keeps the consent it has; one without consent gets the post as its consent', async () => {
    await post(notify(), { email: 'kept@example.com' }, from('/first'));
    const first = await notify().contacts.get('kept@example.com');
    assert.equal(first?.consent_source, 'http://localhost:3000/first');
    await post(notify(), { email: 'kept@example.com', list: 'news' }, from('/second'));
    const again = await notify().contacts.get('kept@example.com');
    assert.equal(again?.consent_source, 'http://localhost:3000/first');
    assert.equal(again?.consent_at?.getTime(), first?.consent_at?.getTime());
    assert.deepEqual(again?.lists, ['news']);

    await notify().contacts.upsert({ email: 'api@example.com', status: 'subscribed' });
    assert.equal((await notify().contacts.get('api@example.com'))?.consent_at, null);
    await post(notify(), { email: 'api@example.com' }, from('/form'));
    const api = await notify().contacts.get('api@example.com');
    assert.equal(api?.consent_source, 'http://localhost:3000/form');
    assert.ok(api?.consent_at instanceof Date);
  });

  test('an unsubscribed address that posts keeps its consent until a link is confirmed', async () => {
    await notify().contacts.upsert({ email: 'left@example.com', status: 'unsubscribed' });
    await post(notify(), { email: 'left@example.com' }, from('/back'));
    const c = await notify().contacts.get('left@example.com');
    assert.deepEqual({ status: c?.status, source: c?.consent_source, at: c?.consent_at }, { status: 'unsubscribed', source: null, at: null });
  });

  test('fields a CSRF middleware adds and notify_ fields are never attributes; constructor and prototype are refused', async () => {
    const csrf = { _csrf: 'a', _token: 'b', csrf_token: 'c', csrfmiddlewaretoken: 'd', authenticity_token: 'e', __RequestVerificationToken: 'f', notify_ts: '1', kept: 'yes' };
    assert.deepEqual(await answer(await post(notify(), { email: 'csrf@example.com', ...csrf })), OK);
    assert.deepEqual((await notify().contacts.get('csrf@example.com'))?.attributes, { kept: 'yes' });
    for (const key of ['constructor', 'prototype']) {
      assert.deepEqual(await answer(await post(notify(), { email: `${key}@example.com`, [key]: 'x' })), refused('invalid_field', 'Field names must be 1 to 64 letters, digits or _ . -'), key);
      assert.equal(await notify().contacts.get(`${key}@example.com`), undefined);
    }
  });

  test('each limit of a post holds exactly its number', async () => {
    const forty = Object.fromEntries(Array.from({ length: 39 }, (_, i) => [`f${i}`, 'v']));
    assert.deepEqual(await answer(await post(notify(), { email: 'forty@example.com', ...forty })), OK, '40 fields');
    assert.equal(Object.keys((await notify().contacts.get('forty@example.com'))?.attributes ?? {}).length, 39);

    const name = 'n'.repeat(200);
    assert.deepEqual(await answer(await post(notify(), { email: 'long-name@example.com', name })), OK);
    assert.equal((await notify().contacts.get('long-name@example.com'))?.name, name);

    const ten = new URLSearchParams({ email: 'ten@example.com' });
    for (let i = 1; i <= 10; i++) ten.append('list', `l${i}`);
    assert.deepEqual(await answer(await post(notify(), ten)), OK);
    assert.equal((await notify().contacts.get('ten@example.com'))?.lists.length, 10);
    ten.set('email', 'eleven@example.com');
    ten.append('list', 'l11');
    assert.deepEqual(await answer(await post(notify(), ten)), refused('invalid_list', 'At most 10 lists per sign-up'));

    const twenty = new URLSearchParams({ email: 'twenty@example.com' });
    for (let i = 0; i < 20; i++) twenty.append('tags', `t${i}`);
    assert.deepEqual(await answer(await post(notify(), twenty)), OK);
    assert.equal(((await notify().contacts.get('twenty@example.com'))?.attributes.tags as string[]).length, 20);
    twenty.set('email', 'twenty-one@example.com');
    twenty.append('tags', 't20');
    assert.deepEqual(await answer(await post(notify(), twenty)), refused('invalid_field', 'A field may repeat at most 20 times'));

    const value = 'v'.repeat(1000);
    assert.deepEqual(await answer(await post(notify(), { email: 'long-value@example.com', note: value })), OK);
    assert.equal((await notify().contacts.get('long-value@example.com'))?.attributes.note, value);
  });

  test('name and lists are trimmed, an empty list left out; a [] field sent once is still a list; a list name may start with a digit', async () => {
    const fields = new URLSearchParams({ email: 'trim@example.com', name: '  Tess  ', list: ' 2024 intake ', 'interests[]': 'art' });
    fields.append('list', '');
    const res = await post(notify(), fields);
    assert.deepEqual(await answer(res), OK);
    const c = await notify().contacts.get('trim@example.com');
    assert.deepEqual({ name: c?.name, lists: c?.lists, attributes: c?.attributes }, { name: 'Tess', lists: ['2024 intake'], attributes: { interests: ['art'] } });
  });

  test('an empty email asks for one; a malformed list name is refused for its spelling', async () => {
    assert.deepEqual(await answer(await post(notify(), { email: '  ' })), refused('invalid_email', 'Please enter your email address.'));
    for (const list of ['-news', 'news!']) {
      assert.deepEqual(await answer(await post(notify(), { email: 'bad-list@example.com', list })), refused('invalid_list', 'A list name must be 1 to 100 letters, digits, spaces or _ . : -'), list);
    }
  });
});

forEachEngine('capture with double opt-in: the email at the SMTP server', (h) => {
  let sink: SmtpSink;
  let instance: Notify;
  const clock = manualClock();
  before(async () => {
    sink = await startSmtpSink();
    instance = await createNotify({ ...testOptions(h.url), doubleOptIn: true, captureRateLimit: 0, clock, feedbackId: 'notify:{kind}', mailer: `smtp://127.0.0.1:${sink.port}` });
  });
  // the instance first: its mailer's pooled connection would hold the sink open
  after(async () => {
    await instance.close();
    await sink.close();
  });
  const notify = () => instance;

  test('the greeting names the stored name, else the posted one, else nobody; the Feedback-ID says optin', async () => {
    await post(notify(), { email: 'new@example.com', name: 'Nell' });
    await post(notify(), { email: 'nameless@example.com' });
    await notify().contacts.upsert({ email: 'stored@example.com', name: 'Stella', status: 'unsubscribed' });
    await post(notify(), { email: 'stored@example.com', name: 'Someone Else' });
    await notify().contacts.upsert({ email: 'unnamed@example.com', status: 'unsubscribed' });
    await post(notify(), { email: 'unnamed@example.com', name: 'Una' });
    const greeting = (email: string) => {
      const [mail] = sentTo(sink, email);
      assert.ok(mail, `a confirmation to ${email}`);
      assert.equal(mail.parsed.headers.get('feedback-id'), 'notify:optin');
      return String(mail.parsed.text).split('\n')[0];
    };
    assert.equal(greeting('new@example.com'), 'Hello Nell,');
    assert.equal(greeting('nameless@example.com'), 'Hello,');
    assert.equal(greeting('stored@example.com'), 'Hello Stella,');
    assert.equal(greeting('unnamed@example.com'), 'Hello Una,');
  });

  test('a transactional address posting is sent a confirmation and waits pending', async () => {
    await notify().contacts.upsert({ email: 'receipts@example.com', status: 'transactional' });
    await post(notify(), { email: 'receipts@example.com' });
    assert.equal(sentTo(sink, 'receipts@example.com').length, 1);
    assert.equal((await notify().contacts.get('receipts@example.com'))?.status, 'pending');
  });

  test('a pending sign-up records the latest request as its consent', async () => {
    await post(notify(), { email: 'twice@example.com' }, from('/one'));
    await post(notify(), { email: 'twice@example.com' }, from('/two'));
    assert.equal((await notify().contacts.get('twice@example.com'))?.consent_source, 'http://localhost:3000/two');
  });

  test('a link still works at exactly 7 days', async () => {
    await post(notify(), { email: 'week@example.com' });
    const [mail] = sentTo(sink, 'week@example.com');
    clock.advance(7 * 24 * 3600_000);
    const res = await call(notify(), new URL(confirmLink(mail.parsed)).pathname, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.equal((await notify().contacts.get('week@example.com'))?.status, 'subscribed');
  });
});

forEachEngine('confirmation emails that cannot leave', (h) => {
  const mailer = recordingMailer();
  const log = recordingLogger();
  const notify = useNotify(h, { doubleOptIn: true, captureRateLimit: 0, mailer, logger: log.logger });
  const unavailable = { status: 503, body: { ok: false, code: 'unavailable', errors: ['Sorry, we could not save your sign-up right now. Please try again later.'] } };
  const lastError = () => log.lines.filter((l) => l.msg === 'capture: could not complete a sign-up').at(-1)?.err as { message: string; code: string; details?: unknown };

  test('a mailer that answers false refuses the sign-up: 503, nothing stored, the log says why', async () => {
    const send = mailer.send;
    mailer.send = async () => false;
    try {
      assert.deepEqual(await answer(await post(notify(), { email: 'refused@example.com' })), unavailable);
    } finally {
      mailer.send = send;
    }
    assert.equal(await notify().contacts.get('refused@example.com'), undefined);
    assert.deepEqual(
      { code: lastError().code, message: lastError().message },
      { code: 'MAILER_FAILED', message: 'Confirmation email to refused@example.com was refused by the mailer' },
    );
  });

  test('a mailer that throws is logged with the address and the mailer error', async () => {
    const send = mailer.send;
    mailer.send = async () => {
      throw new Error('relay down');
    };
    try {
      assert.deepEqual(await answer(await post(notify(), { email: 'thrown@example.com' })), unavailable);
    } finally {
      mailer.send = send;
    }
    assert.match(lastError().message, /^Confirmation email to thrown@example\.com failed: relay down/);
    assert.match(String((lastError() as { stack?: string }).stack), /caused by: Error: relay down/, 'the mailer error is kept as the cause');
  });
});

forEachEngine('double opt-in without a usable from address', (h) => {
  const mailer = recordingMailer();
  const log = recordingLogger();
  const notify = useNotify(h, { doubleOptIn: true, captureRateLimit: 0, mailer, logger: log.logger, fromEmail: undefined });

  test('no confirmation leaves and nothing is stored; the log names the fromEmail option', async () => {
    const res = await post(notify(), { email: 'nofrom@example.com' });
    assert.equal(res.status, 503);
    assert.equal(mailer.sent.length, 0);
    assert.equal(await notify().contacts.get('nofrom@example.com'), undefined);
    const err = log.lines.find((l) => l.msg === 'capture: could not complete a sign-up')?.err as { code: string; message: string };
    assert.equal(err.code, 'MISSING_SENDER');
    assert.equal(
      err.message,
      'Double opt-in needs a from address: set the fromEmail option ("fromEmail" in notify.config.json, NOTIFY_FROM_EMAIL in .env or the environment, or createNotify({ fromEmail }))',
    );
  });
});

forEachEngine('double opt-in with a from address that is no address', (h) => {
  const mailer = recordingMailer();
  const log = recordingLogger();
  const notify = useNotify(h, { doubleOptIn: true, captureRateLimit: 0, mailer, logger: log.logger, fromEmail: 'not-an-address' });

  test('no confirmation leaves; the log blames the fromEmail option, with the header error as its cause', async () => {
    assert.equal((await post(notify(), { email: 'badfrom@example.com' })).status, 503);
    assert.equal(mailer.sent.length, 0);
    assert.equal(await notify().contacts.get('badfrom@example.com'), undefined);
    const err = log.lines.find((l) => l.msg === 'capture: could not complete a sign-up')?.err as { code: string; message: string; details: unknown; stack: string };
    assert.deepEqual({ code: err.code, details: err.details }, { code: 'CONFIG_INVALID', details: { option: 'fromEmail' } });
    assert.match(err.message, /^Double opt-in cannot send: Invalid from address "not-an-address"/);
    assert.match(err.stack, /caused by: NotifyError: Invalid from address/);
  });
});
