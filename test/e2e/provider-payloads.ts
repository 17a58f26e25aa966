// The providers' own documented example payloads, read from test/webhooks/fixtures/ (its README
// names the source of each), so the driver tests and this suite share one copy of every payload.
// The examples name the providers' sample addresses; each is loaded here with that address swapped,
// in code, for one of the run's contacts, and SendGrid's event id for a fresh one. Nothing else of a
// fixture is changed, except where a variant below names the one documented field it sets.
import { randomBytes } from 'node:crypto';
import { providerExample } from '../webhooks/helpers.ts';

type Json = Record<string, unknown>;

/** A fixture with every occurrence of the example's sample address replaced by `email`. */
function example(name: string, sample: string, email: string): unknown {
  const text = providerExample(name);
  if (!text.includes(sample)) throw new Error(`${name} does not name ${sample}`);
  return JSON.parse(text.split(sample).join(email));
}

/** SES bounce with a DSN: its one bounced recipient is jane@example.com. Source: https://docs.aws.amazon.com/ses/latest/dg/notification-examples.html#notification-examples-bounce-with-dsn */
export const sesBounce = (email: string) => example('ses/bounce-with-dsn.json', 'jane@example.com', email) as Json;

/** SES complaint with a feedback report: its one complained recipient is richard@example.com. Source: https://docs.aws.amazon.com/ses/latest/dg/notification-examples.html#notification-examples-complaint-with-feedback */
export const sesComplaint = (email: string) => example('ses/complaint-with-feedback.json', 'richard@example.com', email) as Json;

/** Postmark bounce webhook (HardBounce) for john@example.com. Source: https://postmarkapp.com/support/article/1106-how-to-set-up-a-bounce-webhook */
export const postmarkBounce = (email: string) => example('postmark/bounce.json', 'john@example.com', email) as Json;

/** Postmark spam complaint webhook for john@example.com. Source: https://postmarkapp.com/developer/webhooks/spam-complaint-webhook */
export const postmarkComplaint = (email: string) => example('postmark/spam-complaint.json', 'john@example.com', email) as Json;

/**
 * Postmark's SubscriptionChange example is a hard bounce's suppression; the other reasons it can
 * carry (HardBounce, SpamComplaint, ManualSuppression) are listed on the same page:
 * https://postmarkapp.com/developer/webhooks/subscription-change-webhook
 */
export function postmarkSubscriptionChange(email: string, reason: 'HardBounce' | 'SpamComplaint' | 'ManualSuppression' = 'HardBounce'): Json {
  return { ...(example('postmark/subscription-change.json', 'bounced-address@wildbit.com', email) as Json), SuppressionReason: reason };
}

/**
 * The documented examples reuse one sg_event_id (bounce and blocked share theirs), and SendGrid
 * applies an id once; a real batch carries a distinct id per event, so each load gets one.
 */
function sendgridEvent(name: string, email: string): Json {
  const [event] = example(name, 'example@test.com', email) as Json[];
  return { ...event, sg_event_id: randomBytes(16).toString('base64') };
}

/** SendGrid Event Webhook `bounce` example. Source: https://sendgrid.com/docs/for-developers/tracking-events/event/ (sendgrid/docs, content/docs/for-developers/tracking-events/event.md) */
export const sendgridBounce = (email: string) => sendgridEvent('sendgrid/bounce.json', email);

/** SendGrid Event Webhook `spamreport` example. Source: the same page as the bounce's. */
export const sendgridSpamReport = (email: string) => sendgridEvent('sendgrid/spamreport.json', email);

/**
 * SendGrid's `dropped` example (source: the Event Webhook page above); its reason is "Bounced
 * Address". SendGrid's page on drops names the reasons of the other suppression lists ("Spam Reporting Address", "Unsubscribed Address", "Invalid"):
 * https://sendgrid.com/docs/glossary/drops/ (sendgrid/docs, content/docs/glossary/drops.md)
 */
export function sendgridDropped(email: string, reason = 'Bounced Address'): Json {
  return { ...sendgridEvent('sendgrid/dropped.json', email), reason };
}

/**
 * Mailgun `failed` (permanent) event object: its recipient is recipient@example.com. Source:
 * https://documentation.mailgun.com/en/latest/api-events.html (mailgun/documentation, source/api-events.rst)
 */
export const mailgunPermanentFailure = (email: string) => example('mailgun/failed-permanent.json', 'recipient@example.com', email) as Json;

/** Mailgun `complained` event object: its recipient is foo@example.com. Source: the same page as the failure's. */
export const mailgunComplaint = (email: string) => example('mailgun/complained.json', 'foo@example.com', email) as Json;
