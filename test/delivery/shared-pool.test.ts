import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { round } from '../../src/cli/commands/worker-run.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { silenceConsole } from '../campaigns/helpers.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * `maxConnections` bounds an instance, not a run: campaign runs that overlap in one process (two
 * `campaigns.send` calls at once, a worker round beside an API call) share the SMTP mailer's pool,
 * so the server never sees more connections than that, and no more sends are `sending` (in doubt
 * after a crash) than connections carry them: a send waiting for a connection is not marked.
 * The server takes 1.5 s to answer each message; the `sending` rows are counted until the first
 * answer, while every send in the mailer is still there (none has an outcome waiting to be written).
 */
const MAX = 2;
const PER_CAMPAIGN = 3;

forEachEngine('campaign runs at once in one process share maxConnections', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  let n = 0;
  before(async () => {
    // a slow server: every send holds its connection for a while, so the runs overlap
    sink = await startSmtpSink({ parse: false, replyDelayMs: 1500 });
    notify = await createNotify(testOptions(h.url, { mailer: `${sink.url}?maxConnections=${MAX}` }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  /** campaigns to fresh lists of PER_CAMPAIGN contacts each */
  const campaigns = async (count: number) => {
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const list = `pool${n++}`;
      for (let k = 0; k < PER_CAMPAIGN; k++) await notify.contacts.upsert({ email: `${list}-${k}@example.com`, lists: [list] });
      out.push((await notify.campaigns.create({ subject: 'Pool', text: 'Hi', list })).id);
    }
    return out;
  };

  /** the most send rows `sending` at once while `work` runs, before the server answered a message (sampled every few milliseconds) */
  async function mostSending(work: Promise<unknown>): Promise<number> {
    let most = 0;
    let done = false;
    const answered = sink.messages.length;
    const sampling = (async () => {
      while (!done && sink.messages.length === answered) {
        const row = await notify.context.store.db.selectFrom('notify_sends').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'sending').executeTakeFirst();
        most = Math.max(most, Number(row?.n ?? 0));
        await new Promise((r) => setTimeout(r, 3));
      }
    })();
    try {
      await work;
    } finally {
      done = true;
      await sampling;
    }
    return most;
  }

  test('two campaigns sent at once: at most maxConnections connections and sends in doubt', async () => {
    const ids = await campaigns(2);
    const from = sink.messages.length;
    sink.connections.most = sink.connections.open;
    const most = await mostSending(Promise.all(ids.map((id) => notify.campaigns.send(id))));
    assert.equal(sink.messages.length - from, 2 * PER_CAMPAIGN, 'everyone got it');
    assert.ok(sink.connections.most <= MAX, `the server saw ${sink.connections.most} connections at once (maxConnections ${MAX})`);
    assert.ok(most <= MAX, `${most} sends were 'sending' at once (maxConnections ${MAX})`);
    for (const id of ids) assert.equal((await notify.campaigns.get(id))?.status, 'sent');
  });

  test('a worker round beside a campaign sent through the API of the same process: the same bound', async () => {
    const [first, second] = await campaigns(2);
    // the worker round continues every `sending` campaign: start the second so the round has it
    await notify.context.store.campaigns.transition(second, ['draft'], 'sending', {}, notify.context.clock.now());
    const from = sink.messages.length;
    sink.connections.most = sink.connections.open;
    const restore = silenceConsole();
    let most: number;
    try {
      most = await mostSending(Promise.all([notify.campaigns.send(first), round(notify)]));
    } finally {
      restore();
    }
    assert.ok(sink.messages.length - from >= 2 * PER_CAMPAIGN, 'both campaigns went out');
    assert.ok(sink.connections.most <= MAX, `the server saw ${sink.connections.most} connections at once (maxConnections ${MAX})`);
    assert.ok(most <= MAX, `${most} sends were 'sending' at once (maxConnections ${MAX})`);
  });
});
