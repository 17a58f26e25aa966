import type { Mailer } from '../../src/core/mailer.ts';
import type { Notify } from '../../src/notify.ts';

/** the campaign's send rows in id order */
export async function sendRows(notify: Notify, campaignId: number) {
  return notify.context.store.db.selectFrom('notify_sends').select(['id', 'status', 'to_email']).where('campaign_id', '=', campaignId).orderBy('id').execute();
}

/** the worker's round prints its summaries; tests read results, not lines */
export function silenceConsole(): () => void {
  const { log, error } = console;
  console.log = () => {};
  console.error = () => {};
  return () => {
    console.log = log;
    console.error = error;
  };
}

/**
 * A mailer that accepts messages at once until `holdAt` have arrived, then holds every further
 * one until release() (the sends in flight when a campaign is paused).
 */
export function holdingMailer(holdAt: number) {
  const delivered: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let reached!: () => void;
  const held = new Promise<void>((r) => {
    reached = r;
  });
  const mailer: Mailer = {
    name: 'holding',
    async send(m) {
      if (delivered.length + 1 >= holdAt) {
        reached();
        await gate;
      }
      delivered.push(m.to[0]);
      return { messageId: m.messageId };
    },
  };
  return { mailer, delivered, held, release };
}
