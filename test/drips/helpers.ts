import assert from 'node:assert/strict';
import { manualClock, minutes } from '../../src/core/clock.ts';
import type { Mailer, OutgoingMessage } from '../../src/mail/contract.ts';
import { createNotify, type CreateNotifyOptions, type Notify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { type Engine, freshDatabaseUrl, testOptions } from '../helpers/engines.ts';

/** A mailer tests steer: records what it is given; `fail` makes the next sends return false or throw. */
export interface TestMailer extends Mailer {
  messages: OutgoingMessage[];
  fail: 'false' | 'throw' | null;
}

export function testMailer(): TestMailer {
  const m: TestMailer = {
    name: 'test',
    messages: [],
    fail: null,
    async send(message) {
      if (m.fail === 'false') return false;
      if (m.fail === 'throw') throw new Error('smtp connection refused');
      m.messages.push(message);
      return { messageId: `<${message.sendToken}@test>` };
    },
  };
  return m;
}

export interface DripWorld {
  notify: Notify;
  clock: ReturnType<typeof manualClock>;
  mailer: TestMailer;
  url: string;
  close(): Promise<void>;
}

/** A notify on a database of its own (every transition test starts from nothing due), a manual clock and a test mailer. */
export async function dripWorld(engine: Engine, extra: CreateNotifyOptions = {}): Promise<DripWorld> {
  const db = freshDatabaseUrl(engine);
  const clock = manualClock();
  const mailer = testMailer();
  const notify = await createNotify({ ...testOptions(db.url, { mailer, maxRetries: 3, retryDelayMinutes: 5, staleLockMinutes: 30, ...extra }), clock });
  return {
    notify,
    clock,
    mailer,
    url: db.url,
    async close() {
      await notify.close();
      if (engine === 'postgres') await createStore(db.url).dialect.destroyData();
      db.cleanup();
    },
  };
}

/**
 * A mailer that accepts every message and, while it has the one to `when`, unsubscribes `who`
 * through the one-click POST (the world is set once the notify using it exists); with `via`, the
 * link of that earlier send of theirs (`?s=`: under unsubscribeScope 'list', its campaign's list).
 */
export function unsubscribingMailer(world: { w?: Pick<DripWorld, 'notify'> }, when: string, who: string, via?: () => Promise<string>): { mailer: Mailer; sent: OutgoingMessage[] } {
  const sent: OutgoingMessage[] = [];
  const mailer: Mailer = {
    name: 'unsubscribing',
    async send(message) {
      sent.push(message);
      if (message.to[0] === when && world.w) {
        const { notify } = world.w!;
        const contact = (await notify.contacts.get(who))!;
        const query = via ? `?s=${await via()}` : '';
        const res = await notify.fetch(new Request(`http://x/notify/unsubscribe/${contact.unsubscribe_token}${query}`, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) }));
        assert.equal(res.status, 200);
      }
      return { messageId: `<${message.sendToken}@test>` };
    },
  };
  return { mailer, sent };
}

/** Ann enrolled in a two-step sequence named `name` (10 minutes, then 60), the clock at her first step's time. */
export async function enrollInTwoSteps(w: DripWorld, name: string) {
  await w.notify.contacts.upsert({ email: 'ann@example.com' });
  const seq = await w.notify.drips.createSequence({
    name,
    steps: [
      { delayMinutes: 10, subject: 'One', text: 'one' },
      { delayMinutes: 60, subject: 'Two', text: 'two' },
    ],
  });
  const e = await w.notify.drips.enroll({ contact: 'ann@example.com', sequence: seq.id });
  w.clock.advance(minutes(10));
  return { seq, e };
}
