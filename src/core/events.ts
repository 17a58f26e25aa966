import { EventEmitter } from 'node:events';
import type { OutboundEventType } from './storage/outbound.ts';
import type { UnsubscribeSource } from './suppression.ts';
import type { Contact, Enrollment } from './types.ts';

/** Application events and their payloads. */
export interface NotifyEventMap {
  /**
   * `list` set: the person left only that list (unsubscribeScope 'list'); the contact's status is
   * unchanged. `created`: the contact was created with this status (an upsert or import of an
   * address notify did not know), not changed to it.
   */
  'notify:contact.unsubscribed': { contact: Contact; source: UnsubscribeSource; sendId?: number | null; list?: string; created?: true };
  'notify:contact.bounced': { contact: Contact; message_id: string | null; provider: string | null; created?: true };
  'notify:contact.complained': { contact: Contact; message_id: string | null; provider: string | null; created?: true };
  notify_enrollment_failed: { enrollment: Enrollment; error: string };
  /** joined a list as a subscriber (with double opt-in: on confirmation, one per list then) */
  'notify:contact.subscribed': { contact: EventContact; list: string | null };
  /** confirmed double opt-in */
  'notify:contact.confirmed': { contact: EventContact };
  'notify:email.sent': EmailOutcome;
  'notify:email.failed': EmailOutcome & { error: string | null };
  /** every stored open, once the tracking writer has written its batch */
  'notify:email.opened': Engagement;
  /** every stored click; `link_index` is the link's position in the email */
  'notify:email.clicked': Engagement & { link_index: number | null };
  /** the campaign's last recipient is done; its totals then */
  'notify:campaign.sent': { campaign: { id: number; name: string | null; subject: string }; sent: number; failed: number; suppressed: number };
}

export interface EventContact {
  id: number;
  email: string;
}
export interface EventSend {
  id: number;
  campaign_id: number | null;
  contact_id: number | null;
}
export interface EmailOutcome {
  send: EventSend & { enrollment_id: number | null; message_id: string | null };
  email: string;
  subject: string;
}
export interface Engagement {
  send: EventSend;
  /** ISO 8601 time of the request */
  at: string;
  /** a scanner, a proxy prefetch or a bot, as classified for the human-only figures */
  isMachine: boolean;
  machineReason: string | null;
}
export type NotifyEventName = keyof NotifyEventMap;

/**
 * The in-process name of an outgoing event: the same name, but for the enrollment failure, which
 * the interface spec names `notify_enrollment_failed` and the wire names as the others are named.
 */
export const appEventName = (type: OutboundEventType): NotifyEventName => (type === 'notify:enrollment.failed' ? 'notify_enrollment_failed' : type);

/** A contact as outgoing webhooks name it: no token, attributes or dates leave the process. */
export const eventContact = (c: { id: number; email: string }): EventContact => ({ id: c.id, email: c.email });

export interface NotifyEvents {
  on<E extends NotifyEventName>(event: E, fn: (payload: NotifyEventMap[E]) => void | Promise<void>): () => void;
  emit<E extends NotifyEventName>(event: E, payload: NotifyEventMap[E]): void;
  /** whether anything listens (an event nobody wants is not even built) */
  has(event: NotifyEventName): boolean;
}

/** A listener that throws or rejects is reported through onError; it never breaks the flow that fired it. */
export function createEvents(onError: (err: unknown, event: string) => void): NotifyEvents {
  const emitter = new EventEmitter();
  return {
    on(event, fn) {
      const wrapped = (payload: unknown) => {
        try {
          const result = fn(payload as never);
          if (result && typeof (result as Promise<void>).catch === 'function') (result as Promise<void>).catch((err) => onError(err, event));
        } catch (err) {
          onError(err, event);
        }
      };
      emitter.on(event, wrapped);
      return () => emitter.off(event, wrapped);
    },
    emit(event, payload) {
      emitter.emit(event, payload);
    },
    has: (event) => emitter.listenerCount(event) > 0,
  };
}
