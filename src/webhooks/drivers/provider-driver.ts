import type { ParsedWebhookEvent, WebhookDriverInterface, WebhookEventType, WebhookRequest } from '../contract.ts';
import { type IncomingWebhook, withRequest } from '../request-body.ts';

/**
 * What the providers that simply POST authenticated event batches (Postmark, SendGrid, Mailgun)
 * share: no subscription handshake, and both the route's WebhookRequest (answered synchronously)
 * and a web-standard Request (answered once its body is read) accepted. A subclass says how one
 * WebhookRequest is verified and what events it carries.
 */
export abstract class ProviderWebhookDriver implements WebhookDriverInterface {
  abstract readonly name: string;

  /**
   * `onIgnored` hears of events a provider sent that are deliberately not applied although they
   * look like a suppression (so an operator can see them in the logs); never sees addresses.
   */
  constructor(protected readonly onIgnored: (reason: string) => void = () => {}) {}

  protected abstract verify(request: WebhookRequest): boolean;
  protected abstract events(request: WebhookRequest): ParsedWebhookEvent[];

  verifySignature(request: WebhookRequest): boolean;
  verifySignature(request: Request): Promise<boolean>;
  verifySignature(incoming: IncomingWebhook): boolean | Promise<boolean> {
    return withRequest(incoming, (request) => this.verify(request));
  }

  isSubscriptionConfirmation(): boolean {
    return false;
  }

  confirmSubscription(): void {}

  parseEvents(request: WebhookRequest): ParsedWebhookEvent[];
  parseEvents(request: Request): Promise<ParsedWebhookEvent[]>;
  parseEvents(incoming: IncomingWebhook): ParsedWebhookEvent[] | Promise<ParsedWebhookEvent[]> {
    return withRequest(incoming, (request) => this.events(request));
  }
}

/** A provider's reasons (as it spells them) that mean the address bounced or complained, and which. */
export function reasonTypes(table: Record<string, WebhookEventType>): ReadonlyMap<string, WebhookEventType> {
  return new Map(Object.entries(table));
}
