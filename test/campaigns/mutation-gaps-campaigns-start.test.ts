// How a send run starts a campaign, read where a user sees it: the refusal or note of a run that sends
// nothing (empty audience, no from address), what is logged, the message each campaign's
// recipients get (its own subject, its Liquid `campaign`, its List-Id), a testMode dry run, a cancel's note.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import type { Mailer, OutgoingMessage } from '../../src/core/mailer.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';

/** a mailer that keeps what it was handed; `fail` (when it says so) answers 421 instead */
function keepingMailer(fail: () => boolean = () => false) {
  const sent: OutgoingMessage[] = [];
  const mailer: Mailer = {
    name: 'keeping',
    async send(m) {
      if (fail()) throw Object.assign(new Error('421 try later'), { responseCode: 421 });
      sent.push(m);
      return { messageId: m.messageId };
    },
  };
  return { mailer, sent };
}

const NOW = Date.UTC(2030, 0, 1, 12);

// no contact is ever added in this block: every audience here is empty
forEachEngine('campaign start: an empty audience', (h) => {
  test('a draft: EMPTY_AUDIENCE saying which audience, the campaign left a draft', async (t) => {
    const notify = await createNotify(testOptions(h.url));
    t.after(() => notify.close());
    await notify.lists.create({ name: 'nobody' });
    const cases = [
      [{}, 'no subscribed contact'],
      [{ list: 'nobody' }, 'no subscribed contact in list "nobody"'],
      [{ segment: { list: 'nobody' } }, 'no subscribed contact matching its segment'],
    ] as const;
    for (const [audience, why] of cases) {
      const c = await notify.campaigns.create({ subject: 'Empty', text: 'x', ...audience });
      await assert.rejects(notify.campaigns.send(c.id), (e) => {
        assert.ok(isNotifyError(e, 'EMPTY_AUDIENCE'), String(e));
        assert.equal(e.message, `Campaign ${c.id} not started: its audience is empty (${why})`);
        assert.deepEqual(e.details, { campaignId: c.id });
        return true;
      });
      assert.equal((await notify.campaigns.get(c.id))?.status, 'draft');
    }
  });

  test('a scheduled one: paused with the reason, logged; the next run says it is paused and why', async (t) => {
    const clock = manualClock(NOW);
    const log = recordingLogger();
    const notify = await createNotify(testOptions(h.url, { clock, logger: log.logger }));
    t.after(() => notify.close());
    const c = await notify.campaigns.create({ subject: 'Later', text: 'x' });
    await notify.campaigns.schedule(c.id, new Date(NOW + minutes(5)));
    clock.advance(minutes(5));
    const why = 'its audience is empty (no subscribed contact)';
    const r = await notify.campaigns.send(c.id);
    assert.deepEqual([r.status, r.note, r.sent], ['paused', `campaign ${c.id} not started: ${why}; it is paused`, 0]);
    const stored = await notify.campaigns.get(c.id);
    assert.deepEqual([stored?.status, stored?.status_reason], ['paused', `not started: ${why}`]);
    const warned = log.lines.filter((l) => l.campaignId === c.id && l.level === 40);
    assert.deepEqual(
      warned.map((l) => l.msg),
      [`scheduled campaign ${c.id} not started: ${why}; paused`],
    );
    const again = await notify.campaigns.send(c.id);
    assert.equal(again.note, `campaign ${c.id} is paused (not started: ${why}); resume it to continue`);
  });
});

forEachEngine('campaign start: what a run sends and says', (h) => {
  test('each campaign of one instance goes out with its own subject, and its Liquid `campaign` holds its id, name and subject', async (t) => {
    const rec = keepingMailer();
    const notify = await createNotify(testOptions(h.url, { mailer: rec.mailer }));
    t.after(() => notify.close());
    await notify.contacts.upsert({ email: 'two@example.com', lists: ['two'] });
    const body = '{{ campaign.id }}|{{ campaign.name }}|{{ campaign.subject }}';
    const named = await notify.campaigns.create({ subject: 'First', name: 'Named', text: body, list: 'two' });
    const unnamed = await notify.campaigns.create({ subject: 'Second', text: body, list: 'two' });
    await notify.campaigns.send(named.id);
    await notify.campaigns.send(unnamed.id);
    assert.deepEqual(
      rec.sent.map((m) => [m.subject, m.text?.trim()]),
      [
        ['First', `${named.id}|Named|First`],
        ['Second', `${unnamed.id}||Second`],
      ],
    );
  });

  test('List-Id from listIdDomain for a campaign to a list; the campaign\'s own Feedback-ID wins over the generated one', async (t) => {
    const rec = keepingMailer();
    const notify = await createNotify(testOptions(h.url, { mailer: rec.mailer, listIdDomain: 'lists.example.com', feedbackId: '{kind}-{id}' }));
    t.after(() => notify.close());
    await notify.contacts.upsert({ email: 'hdr@example.com', lists: ['hdr'] });
    const plain = await notify.campaigns.create({ subject: 'H1', text: 'x', list: 'hdr' });
    const own = await notify.campaigns.create({ subject: 'H2', text: 'x', list: 'hdr', headers: { 'Feedback-ID': 'mine' } });
    await notify.campaigns.send(plain.id);
    await notify.campaigns.send(own.id);
    assert.equal(rec.sent[0].headers['List-Id'], '<hdr.lists.example.com>');
    assert.equal(rec.sent[0].headers['Feedback-ID'], `campaign-${plain.id}`);
    assert.equal(rec.sent[1].headers['Feedback-ID'], 'mine');
    assert.equal(rec.sent[1].headers['List-Id'], '<hdr.lists.example.com>');
  });

  test('rescheduled after everyone left but those it reached: it starts and finishes, not paused as empty', async (t) => {
    const clock = manualClock(NOW);
    const rec = keepingMailer();
    const notify = await createNotify(testOptions(h.url, { mailer: rec.mailer, clock, batchSize: 1 }));
    t.after(() => notify.close());
    await notify.contacts.upsert({ email: 'r1@example.com', lists: ['resched'] });
    await notify.contacts.upsert({ email: 'r2@example.com', lists: ['resched'] });
    const c = await notify.campaigns.create({ subject: 'Again', text: 'x', list: 'resched' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 1);
    await notify.campaigns.pause(c.id);
    const left = ['r1@example.com', 'r2@example.com'].find((e) => e !== rec.sent[0].to[0])!;
    await notify.contacts.unsubscribe(left);
    await notify.campaigns.schedule(c.id, new Date(NOW + minutes(1)));
    clock.advance(minutes(1));
    const r = await notify.campaigns.send(c.id);
    assert.notEqual(r.status, 'paused', r.note);
    assert.notEqual((await notify.campaigns.get(c.id))?.status, 'paused');
    assert.equal(rec.sent.length, 1);
  });

  test('no from address: a due scheduled campaign is paused with the reason, logged', async (t) => {
    const clock = manualClock(NOW);
    const log = recordingLogger();
    const notify = await createNotify(testOptions(h.url, { clock, logger: log.logger, fromEmail: '' }));
    t.after(() => notify.close());
    await notify.contacts.upsert({ email: 'nofrom@example.com', lists: ['nofrom'] });
    const draft = await notify.campaigns.create({ subject: 'Draft', text: 'x', list: 'nofrom' });
    let missing = '';
    await assert.rejects(notify.campaigns.send(draft.id), (e) => {
      missing = isNotifyError(e, 'MISSING_SENDER') ? e.message : '';
      return missing !== '';
    });
    const reason = `not started: no from address (${missing.replace('No from address: ', '')})`;
    const c = await notify.campaigns.create({ subject: 'Scheduled', text: 'x', list: 'nofrom' });
    await notify.campaigns.schedule(c.id, new Date(NOW + minutes(1)));
    clock.advance(minutes(1));
    const r = await notify.campaigns.send(c.id);
    assert.equal(r.status, 'paused');
    assert.equal((await notify.campaigns.get(c.id))?.status_reason, reason);
    const warned = log.lines.filter((l) => l.campaignId === c.id && l.level === 40).map((l) => l.msg);
    assert.deepEqual(warned, [`campaign ${c.id} ${reason}; paused`]);
  });

  test('testMode: each campaign\'s dry run logs its own subject, with the dry-run token', async (t) => {
    const log = recordingLogger();
    const notify = await createNotify(testOptions(h.url, { testMode: true, logger: log.logger }));
    t.after(() => notify.close());
    await notify.contacts.upsert({ email: 'dry@example.com', lists: ['dry'] });
    for (const subject of ['Dry one', 'Dry two']) {
      const c = await notify.campaigns.create({ subject, text: 'x', list: 'dry' });
      assert.equal((await notify.campaigns.send(c.id)).dryRun, 1);
    }
    const logged = log.lines.filter((l) => l.mailer === 'testMode').map((l) => [l.subject, l.sendToken]);
    assert.deepEqual(logged, [
      ['Dry one', 'dry-run-not-a-token00'],
      ['Dry two', 'dry-run-not-a-token00'],
    ]);
  });

  test('cancel: sends waiting for a retry are cancelled and the count logged; a cancel with none logs no such line', async (t) => {
    let failing = true;
    const rec = keepingMailer(() => failing);
    const log = recordingLogger();
    const notify = await createNotify(testOptions(h.url, { mailer: rec.mailer, logger: log.logger }));
    t.after(() => notify.close());
    for (const i of [1, 2]) await notify.contacts.upsert({ email: `wait${i}@example.com`, lists: ['wait'] });
    const c = await notify.campaigns.create({ subject: 'Waiting', text: 'x', list: 'wait' });
    assert.equal((await notify.campaigns.send(c.id)).deferred, 2);
    await notify.campaigns.cancel(c.id);
    const quiet = await notify.campaigns.create({ subject: 'Quiet', text: 'x', list: 'wait' });
    await notify.campaigns.cancel(quiet.id);
    failing = false;
    const lines = log.lines.filter((l) => /send\(s\) waiting for a retry/.test(String(l.msg)));
    assert.deepEqual(
      lines.map((l) => [l.campaignId, l.sends, l.msg]),
      [[c.id, 2, `campaign ${c.id} cancelled: 2 send(s) waiting for a retry will not be tried`]],
    );
  });
});
