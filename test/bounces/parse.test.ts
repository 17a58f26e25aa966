import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deliveryEventType, reportEvents, reportToken } from '../../src/bounces/events.ts';
import { parseFieldBlocks, fieldAddress } from '../../src/bounces/fields.ts';
import { parseReport } from '../../src/bounces/report.ts';
import { verpAddress, verpToken } from '../../src/bounces/verp.ts';
import { isNotifyError } from '../../src/errors.ts';
import { BOUNCE_DOMAIN, fixture, REAL_REPORTS } from './helpers.ts';

describe('bounce reports from real MTAs and feedback loops', () => {
  for (const r of REAL_REPORTS) {
    test(`${r.mta} (${r.file}): token found, ${r.type} for the send's address`, async () => {
      const report = await parseReport(fixture(r.file));
      assert.equal(reportToken(report, BOUNCE_DOMAIN), r.token);
      const out = reportEvents(report, { to_email: r.to, message_id: '<m1@example.com>' }, report.messageId ?? 'x');
      assert.deepEqual(
        out.events.map((e) => [e.type, e.email, e.message_id]),
        [[r.type, r.to, '<m1@example.com>']],
      );
    });
  }

  test('Postfix: Final-Recipient, Original-Recipient, action and status as written', async () => {
    const report = await parseReport(fixture('postfix-over-quota.eml'));
    assert.equal(report.kind, 'delivery-status');
    assert.equal(report.messageId, '20250129163657.EA6A213B@mx-by.bbox.fr');
    assert.deepEqual(report.recipients, [
      { final: 'recipient@domain.com', original: 'recipient@domain.com', action: 'failed', status: '5.0.0', diagnostic: 'smtp; 552 <recipient@domain.com> rejected: over quota' },
    ]);
  });

  test('Exchange: a Final-recipient folded onto the next line, lower-case field names', async () => {
    const report = await parseReport(fixture('exchange-2007-unknown-recipient.eml'));
    assert.equal(report.recipients.length, 1);
    assert.equal(report.recipients[0]!.final, 'email_that_does_not_exists_this_is_just_a_test@gmail.com');
    assert.equal(report.recipients[0]!.status, '5.1.1');
  });

  test('Exim: token in Envelope-to, and in the returned original Return-path', async () => {
    const report = await parseReport(fixture('exim-failed.eml'));
    assert.match(report.headers.get('envelope-to')![0]!, /eximTestToken000000001/);
    assert.match(report.original.get('return-path')![0]!, /eximTestToken000000001/);
  });

  test('Gmail: the image part and nested multiparts do not hide the delivery-status part', async () => {
    const report = await parseReport(fixture('gmail-rejected.eml'));
    assert.deepEqual(
      report.recipients.map((r) => [r.final, r.action, r.status]),
      [['kijitora@example.com', 'failed', '5.0.0']],
    );
    assert.equal(report.original.get('message-id')![0], '<160000000000.2022.837987497898796986@NEKO-NYAAN-22>');
  });

  test('RFC 3464 example: three recipients, only the send\'s own one is applied, the others are reported as mismatched', async () => {
    const report = await parseReport(fixture('rfc3464-three-recipients.eml'));
    assert.deepEqual(
      report.recipients.map((r) => [r.final, r.action, r.status]),
      [
        ['arathib@vnet.ibm.com', 'failed', '5.0.0'],
        ['johnh@hpnjld.njd.hp.com', 'delayed', '4.0.0'],
        ['wsnell@sdcc13.ucsd.edu', 'failed', '5.0.0'],
      ],
    );
    const delayed = reportEvents(report, { to_email: 'JohnH@hpnjld.njd.hp.com', message_id: null }, 'r1');
    assert.deepEqual(
      delayed.events.map((e) => [e.type, e.email, e.message_id, e.id]),
      [['soft_bounce', 'JohnH@hpnjld.njd.hp.com', '', 'r1:johnh@hpnjld.njd.hp.com:soft_bounce']],
    );
    assert.deepEqual(delayed.mismatched, ['arathib@vnet.ibm.com', 'wsnell@sdcc13.ucsd.edu']);
  });

  test('Yahoo feedback loop: the report goes to the abuse desk; the token is in Original-Mail-From', async () => {
    const report = await parseReport(fixture('arf-yahoo-abuse.eml'));
    assert.equal(report.kind, 'feedback-report');
    assert.equal(reportToken({ ...report, feedback: { ...report.feedback!, originalMailFrom: undefined } }, BOUNCE_DOMAIN), undefined);
    assert.deepEqual(report.feedback, { type: 'abuse', originalMailFrom: '<bounces+yahooArfToken000000001@bounce.test>', originalRcptTo: ['user@yahoo.com'] });
  });

  test('RFC 5965 example: an inline message/rfc822 part still gives its headers (the token in its Return-Path)', async () => {
    const report = await parseReport(fixture('arf-rfc5965-example.eml'));
    assert.equal(report.feedback!.originalMailFrom, '<somespammer@example.net>');
    assert.equal(report.original.get('return-path')![0], '<bounces+rfc5965ExampleTok00001@bounce.test>');
    assert.equal(report.original.get('subject')![0], 'Earn money');
  });
});

describe('reports that are not applied', () => {
  test('a DSN without a VERP token: no token', async () => {
    const report = await parseReport(fixture('rfc3464-no-verp.eml'));
    assert.equal(reportToken(report, BOUNCE_DOMAIN), undefined);
  });

  test('a VERP address of another domain is not ours', async () => {
    const report = await parseReport(fixture('postfix-over-quota.eml'));
    assert.equal(reportToken(report, 'other.example'), undefined);
  });

  test('a report naming another recipient than the send went to: no event, the recipient reported', async () => {
    const report = await parseReport(fixture('postfix-over-quota.eml'));
    const out = reportEvents(report, { to_email: 'someone-else@domain.com', message_id: null }, 'r');
    assert.deepEqual(out.events, []);
    assert.deepEqual(out.mismatched, ['recipient@domain.com']);
  });

  test('a complaint whose Original-Rcpt-To is another address: no event', async () => {
    const report = await parseReport(fixture('arf-yahoo-abuse.eml'));
    const out = reportEvents(report, { to_email: 'other@yahoo.com', message_id: null }, 'r');
    assert.deepEqual(out.events, []);
    assert.deepEqual(out.mismatched, ['user@yahoo.com']);
  });

  test('a complaint with the recipient redacted: the token alone names the send', async () => {
    const report = await parseReport(fixture('arf-yahoo-abuse.eml'));
    report.feedback!.originalRcptTo = [];
    const out = reportEvents(report, { to_email: 'anyone@yahoo.com', message_id: null }, 'r');
    assert.deepEqual(out.events.map((e) => e.type), ['complaint']);
  });

  test('a feedback type other than abuse is read but applies nothing', async () => {
    const raw = fixture('arf-yahoo-abuse.eml').toString('utf8').replace('Feedback-Type: abuse', 'Feedback-Type: not-spam');
    const out = reportEvents(await parseReport(raw), { to_email: 'user@yahoo.com', message_id: null }, 'r');
    assert.deepEqual(out.events, []);
    assert.deepEqual(out.ignored, ['user@yahoo.com: feedback type not-spam']);
  });

  const notReports: [string, string][] = [
    ['a plain message', 'From: a@example.com\r\nTo: b@example.com\r\nSubject: hi\r\n\r\nhello\r\n'],
    ['an old plain-text bounce', 'From: MAILER-DAEMON@example.com\r\nSubject: Returned mail\r\nContent-Type: text/plain\r\n\r\n550 user unknown\r\n'],
    ['a read receipt (report-type disposition-notification)', 'Content-Type: multipart/report; report-type=disposition-notification; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nread\r\n--b--\r\n'],
    ['a DSN whose delivery-status part is missing', 'Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--b--\r\n'],
    ['a feedback report without Feedback-Type', 'Content-Type: multipart/report; report-type=feedback-report; boundary=b\r\n\r\n--b\r\nContent-Type: message/feedback-report\r\n\r\nVersion: 1\r\n--b--\r\n'],
    ['bytes that are no message at all', '\u0000\u0001\u0002 not mail'],
  ];
  for (const [what, raw] of notReports) {
    test(`${what}: INVALID_INPUT saying why`, async () => {
      await assert.rejects(parseReport(raw), (err) => isNotifyError(err, 'INVALID_INPUT') && err.message.length > 10);
    });
  }
});

describe('report pieces', () => {
  test('status mapping: failed 5.x.x bounce, failed 4.x.x soft, delayed soft, delivered/relayed nothing', () => {
    assert.equal(deliveryEventType({ action: 'failed', status: '5.1.1' }), 'bounce');
    assert.equal(deliveryEventType({ action: 'failed', status: '4.4.7' }), 'soft_bounce');
    assert.equal(deliveryEventType({ action: 'failed', status: undefined }), 'bounce');
    assert.equal(deliveryEventType({ action: 'delayed', status: '4.0.0' }), 'soft_bounce');
    assert.equal(deliveryEventType({ action: 'delivered', status: '2.0.0' }), undefined);
    assert.equal(deliveryEventType({ action: 'relayed', status: '2.0.0' }), undefined);
  });

  test('VERP: address and token round-trip; the domain is case-insensitive, the token is not altered', () => {
    const token = 'Ab-_0123456789abcdefgh';
    assert.equal(verpAddress(token, BOUNCE_DOMAIN), `bounces+${token}@bounce.test`);
    assert.equal(verpToken(`Bounce Handler <bounces+${token}@BOUNCE.TEST>`, BOUNCE_DOMAIN), token);
    assert.equal(verpToken(`rfc822; bounces+${token}@bounce.test.`, BOUNCE_DOMAIN), token);
    assert.equal(verpToken(`bounces+${token}@bounce.test.evil.example`, BOUNCE_DOMAIN), undefined);
    assert.equal(verpToken('bounces+short@bounce.test', BOUNCE_DOMAIN), undefined);
    assert.equal(verpToken(`notbounces+${token}@bounce.test`, BOUNCE_DOMAIN), undefined);
  });

  test('fields: folded values joined, blank lines separate blocks, typed addresses unwrapped', () => {
    const blocks = parseFieldBlocks('Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822;\r\n <x@y.example>\r\nAction: failed\r\n\r\n\r\n');
    assert.equal(blocks.length, 2);
    assert.equal(blocks[1]!.get('final-recipient')![0], 'rfc822; <x@y.example>');
    assert.equal(fieldAddress('rfc822; <x@y.example>'), 'x@y.example');
    assert.equal(fieldAddress('x-local; someone'), undefined);
    assert.equal(fieldAddress('Someone <s@y.example>'), 's@y.example');
  });
});
