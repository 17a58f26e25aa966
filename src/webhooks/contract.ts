/**
 * The webhook driver contract. A driver knows one provider's wire format: how its
 * requests are authenticated, whether one is a subscription handshake, and which bounce and
 * complaint events it carries. It knows nothing of contacts or storage: the route verifies,
 * confirms or parses through the driver, and core/webhook-events.ts applies the events.
 */

export type WebhookEventType = 'bounce' | 'soft_bounce' | 'complaint';

/** A parsed webhook event. */
export interface ParsedWebhookEvent {
  type: WebhookEventType;
  /** address of the affected contact */
  email: string;
  /** provider message identifier (matched against notify_sends.message_id) */
  message_id: string;
  /**
   * The provider's id of this event, stable across redeliveries (SNS MessageId plus recipient,
   * SendGrid sg_event_id, Mailgun token, Postmark record ID). A delivery whose id was already
   * applied is applied once. Without it, a hash of the body and the event's position is used.
   */
  id?: string;
}

/**
 * The incoming request as every method receives it: the body is read once by the route (capped)
 * and handed over as exact bytes, because signatures are computed over exactly those bytes.
 */
export interface WebhookRequest {
  readonly method: string;
  readonly url: string;
  /** lower-case names, as web-standard Headers */
  readonly headers: Headers;
  /** the exact body bytes */
  readonly body: Buffer;
  /** the body decoded as UTF-8 */
  readonly text: string;
}

/**
 * What a driver implements. Methods may answer synchronously or with a promise. `name` keys the
 * receipts that make a redelivery apply once; it defaults to the driver's class name.
 */
export interface WebhookDriverInterface {
  readonly name?: string;
  /** whether the request genuinely comes from the ESP (false = 403, nothing applied) */
  verifySignature(request: WebhookRequest): boolean | Promise<boolean>;
  /** whether the request is a subscription confirmation (asked only after verifySignature passed) */
  isSubscriptionConfirmation(request: WebhookRequest): boolean | Promise<boolean>;
  /** completes the subscription confirmation; throws when it could not */
  confirmSubscription(request: WebhookRequest): void | Promise<void>;
  /** the bounce, soft_bounce and complaint events the request carries; others are left out */
  parseEvents(request: WebhookRequest): ParsedWebhookEvent[] | Promise<ParsedWebhookEvent[]>;
}

/** What a driver built from configuration gets. */
export interface WebhookDriverDeps {
  /** for certificate fetches and subscription confirmations; injectable so tests run offline */
  fetch: typeof fetch;
  now: () => Date;
}

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = ['bounce', 'soft_bounce', 'complaint'];

/** A driver-produced event is used only when its shape is right (a custom driver may return anything). */
export function isParsedWebhookEvent(e: unknown): e is ParsedWebhookEvent {
  if (typeof e !== 'object' || e === null) return false;
  const v = e as Record<string, unknown>;
  return (
    WEBHOOK_EVENT_TYPES.includes(v.type as WebhookEventType) &&
    typeof v.email === 'string' &&
    typeof v.message_id === 'string' &&
    (v.id === undefined || typeof v.id === 'string')
  );
}
