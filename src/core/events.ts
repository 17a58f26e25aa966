import { EventEmitter } from 'node:events';
import type { UnsubscribeSource } from './suppression.ts';
import type { Contact, Enrollment } from './types.ts';

/** Application events and their payloads. */
export interface NotifyEventMap {
  /** `list` set: the person left only that list (unsubscribeScope 'list'); the contact's status is unchanged */
  'notify:contact.unsubscribed': { contact: Contact; source: UnsubscribeSource; sendId?: number | null; list?: string };
  'notify:contact.bounced': { contact: Contact; message_id: string | null; provider: string | null };
  'notify:contact.complained': { contact: Contact; message_id: string | null; provider: string | null };
  notify_enrollment_failed: { enrollment: Enrollment; error: string };
}
export type NotifyEventName = keyof NotifyEventMap;

export interface NotifyEvents {
  on<E extends NotifyEventName>(event: E, fn: (payload: NotifyEventMap[E]) => void | Promise<void>): () => void;
  emit<E extends NotifyEventName>(event: E, payload: NotifyEventMap[E]): void;
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
  };
}
