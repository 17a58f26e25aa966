import type { Notify } from '../notify.ts';

/** What the demo put in its folder, for the summary it prints. */
export interface DemoSeed {
  contacts: number;
  campaignId: number;
  sent: number;
  suppressed: number;
  drip: { sequence: string; enrolled: number; sent: number };
}

export const DEMO_LIST = 'demo';

const PEOPLE: [string, string][] = [
  ['Ada Lovelace', 'ada@example.com'],
  ['Grace Hopper', 'grace@example.com'],
  ['Alan Turing', 'alan@example.com'],
  ['Katherine Johnson', 'katherine@example.com'],
  ['Edsger Dijkstra', 'edsger@example.com'],
];
/** already unsubscribed: the campaign skips them (suppressed), as it would a real opt-out */
const OPTED_OUT: [string, string] = ['Charles Babbage', 'charles@example.com'];

/**
 * Sample contacts, one campaign sent to them into the outbox. The campaign's first link leads back
 * to the admin dashboard, so following it from the outbox shows the click counted right away.
 */
export async function seedDemo(notify: Notify, url: string): Promise<DemoSeed> {
  for (const [name, email] of PEOPLE) await notify.contacts.upsert({ email, name, lists: [DEMO_LIST], attributes: { plan: 'free' } });
  await notify.contacts.upsert({ email: OPTED_OUT[1], name: OPTED_OUT[0], lists: [DEMO_LIST], status: 'unsubscribed' });
  const campaign = await notify.campaigns.create({
    name: 'Demo: spring newsletter',
    subject: 'Hello {{ contact.name }}, this is the notify demo',
    list: DEMO_LIST,
    markdown: [
      '# Welcome, {{ contact.name }}',
      '',
      'This message went to the demo outbox: no mail server was involved. Opening it in the admin',
      'outbox loaded its tracking pixel, so the campaign already counts an **open**.',
      '',
      `- [See your click counted](${url}/notify/admin): this link goes through \`/notify/click\` and back to the dashboard.`,
      '- [The project on example.com](https://example.com/notify): a link out, tracked the same way.',
      '',
      'The **Unsubscribe** link below takes you off the list: the campaign counts it and later sends skip you.',
    ].join('\n'),
  });
  let sent = 0;
  let suppressed = 0;
  for (;;) {
    const run = await notify.campaigns.send(campaign.id);
    sent += run.sent;
    suppressed += run.suppressed;
    if (run.done || run.sent + run.failed + run.suppressed === 0) break;
  }
  return { contacts: PEOPLE.length + 1, campaignId: campaign.id, sent, suppressed, drip: await seedDrip(notify) };
}

const SEQUENCE = 'Demo: welcome series';

/**
 * A two-step welcome sequence (now, then a day later), the demo contacts enrolled and one
 * notify:process-drips run, so the first step is in the outbox.
 */
async function seedDrip(notify: Notify): Promise<DemoSeed['drip']> {
  await notify.drips.createSequence({
    name: SEQUENCE,
    steps: [
      { delayMinutes: 0, subject: 'Welcome aboard, {{ contact.name }}', markdown: 'Step 1 of the demo drip sequence: sent as soon as you enrolled.' },
      { delayMinutes: 24 * 60, subject: 'Day two, {{ contact.name }}', markdown: 'Step 2 arrives a day after step 1 (run `notify notify:process-drips` then).' },
    ],
  });
  for (const [, email] of PEOPLE) await notify.drips.enroll({ contact: email, sequence: SEQUENCE });
  const run = await notify.drips.process();
  return { sequence: SEQUENCE, enrolled: PEOPLE.length, sent: run.sent };
}
