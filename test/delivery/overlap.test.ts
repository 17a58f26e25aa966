import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { Mailer } from '../../src/core/mailer.ts';
import { NotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import type { Logger } from 'pino';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';

const PEOPLE = 12;

/**
 * A mailer that can hold a message until `ready` (as the SMTP mailer holds the end of DATA): it
 * notes, per message, whether its send row was `sending` when ready said true, and counts what it
 * let leave.
 */
function holdingMailer(statusOf: (token: string) => Promise<string | undefined>, concurrency?: number) {
  const state = { handed: 0, delivered: 0, heldBack: 0, statusAtRelease: [] as (string | undefined)[] };
  const mailer: Mailer = {
    name: 'holding',
    concurrency,
    async send(m) {
      state.delivered++;
      return { messageId: m.messageId };
    },
    async sendWhen(m, ready) {
      state.handed++;
      if (!(await ready)) {
        state.heldBack++;
        throw new NotifyError('NOT_RELEASED', 'held back');
      }
      state.statusAtRelease.push(await statusOf(m.sendToken));
      state.delivered++;
      return { messageId: m.messageId };
    },
  };
  return { mailer, state };
}

async function statuses(notify: Notify, campaignId: number): Promise<Record<string, number>> {
  const rows = await notify.context.store.db.selectFrom('notify_sends').select('status').where('campaign_id', '=', campaignId).execute();
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** until `done`, with a deadline that a loaded machine does not reach */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 15_000; !done(); await sleep(5)) if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
}

forEachEngine('the start commit overlaps the hand-over; the message leaves only once it is committed', (h) => {
  const open = async (concurrency?: number, logger?: Logger) => {
    let notify: Notify | undefined;
    const statusOf = async (token: string) => (await notify!.context.store.db.selectFrom('notify_sends').select('status').where('token', '=', token).executeTakeFirst())?.status;
    const hold = holdingMailer(statusOf, concurrency);
    notify = await createNotify(testOptions(h.url, { mailer: hold.mailer, batchSize: 1000, ...(logger && { logger }) }));
    for (let i = 0; i < PEOPLE; i++) await notify.contacts.upsert({ email: `o${i}@example.com`, lists: ['overlap'] });
    const c = await notify.campaigns.create({ subject: 'Overlap', text: 'hi', list: 'overlap' });
    return { notify, hold, campaignId: c.id };
  };

  test('messages reach the mailer while their start commit is held; each leaves with its row committed `sending`', async () => {
    const { notify, hold, campaignId } = await open();
    const campaigns = notify.context.store.campaigns;
    const write = campaigns.writeSendGroup.bind(campaigns);
    let release!: () => void;
    const blocked = new Promise<void>((r) => {
      release = r;
    });
    let writes = 0;
    campaigns.writeSendGroup = async (...args) => {
      if (writes++ === 0) await blocked;
      return write(...args);
    };
    try {
      const run = notify.campaigns.send(campaignId);
      await until(() => hold.state.handed >= 5, 'five messages handed over');
      assert.equal(hold.state.delivered, 0, 'none left while its start was not committed');
      assert.deepEqual(await statuses(notify, campaignId), { queued: PEOPLE });
      release();
      const result = await run;
      assert.deepEqual([result.sent, result.failed, result.done], [PEOPLE, 0, true]);
      assert.deepEqual(hold.state.statusAtRelease, Array(PEOPLE).fill('sending'));
      assert.deepEqual(await statuses(notify, campaignId), { sent: PEOPLE });
    } finally {
      await notify.close();
    }
  });

  test('a start refused (the campaign paused by another process) holds the messages back: none delivered, rows given back, nothing counted', async () => {
    const { notify, hold, campaignId } = await open();
    const campaigns = notify.context.store.campaigns;
    const write = campaigns.writeSendGroup.bind(campaigns);
    campaigns.writeSendGroup = async (id, group, now) => {
      // another process pauses it (no in-process signal reaches this run) just before the first start
      if (group.start.length > 0) await notify.context.store.db.updateTable('notify_campaigns').set({ status: 'paused' }).where('id', '=', id).execute();
      return write(id, group, now);
    };
    try {
      const result = await notify.campaigns.send(campaignId);
      assert.equal(hold.state.delivered, 0);
      assert.equal(hold.state.heldBack, hold.state.handed);
      assert.equal(result.status, 'paused');
      assert.deepEqual([result.sent, result.failed], [0, 0]);
      assert.deepEqual(await statuses(notify, campaignId), {}, 'every claimed row given back: a resume sends them');
      assert.equal((await notify.campaigns.getCampaignStats(campaignId)).sent, 0);
    } finally {
      await notify.close();
    }
  });

  test("the pool follows the mailer's concurrency: with 2, at most 2 sends are in flight (and in doubt)", async () => {
    const { notify, hold, campaignId } = await open(2);
    const campaigns = notify.context.store.campaigns;
    const write = campaigns.writeSendGroup.bind(campaigns);
    let most = 0;
    campaigns.writeSendGroup = async (...args) => {
      const out = await write(...args);
      most = Math.max(most, (await statuses(notify, campaignId)).sending ?? 0);
      return out;
    };
    try {
      const result = await notify.campaigns.send(campaignId);
      assert.equal(result.sent, PEOPLE);
      assert.ok(most >= 1 && most <= 2, `at most 2 rows sending at once, saw ${most}`);
      assert.equal(hold.state.delivered, PEOPLE);
    } finally {
      await notify.close();
    }
  });

  test('the start write fails (the database went away): the run fails with that error, nothing leaves, no delivery is logged as failed', async () => {
    const { logger, lines } = recordingLogger();
    const { notify, hold, campaignId } = await open(undefined, logger);
    const campaigns = notify.context.store.campaigns;
    campaigns.writeSendGroup = async () => {
      throw new Error('database went away');
    };
    try {
      await assert.rejects(notify.campaigns.send(campaignId), /database went away/);
      assert.equal(hold.state.delivered, 0);
      assert.deepEqual(
        lines.filter((l) => l.msg === 'delivery failed'),
        [],
      );
    } finally {
      await notify.close();
    }
  });
});
