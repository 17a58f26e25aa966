import type { Config } from '../config.ts';
import { appEventName, type NotifyEvents } from '../core/events.ts';
import { type EventSink, OUTBOUND_EVENT_TYPES, type OutboundEventType } from '../core/storage/outbound.ts';

/**
 * Where the store's events go: the webhooksOut endpoints that take each type (decided once, from
 * the config) and the in-process listeners of the moment.
 */
export function createEventSink(config: Pick<Config, 'webhooksOut'>, events: NotifyEvents): EventSink {
  const endpoints = new Map<OutboundEventType, string[]>(OUTBOUND_EVENT_TYPES.map((t) => [t, config.webhooksOut.filter((h) => !h.events || h.events.includes(t)).map((h) => h.url)]));
  return {
    endpointsFor: (type) => endpoints.get(type) ?? [],
    wants: (type) => (endpoints.get(type)?.length ?? 0) > 0 || events.has(appEventName(type)),
    listens: (type) => events.has(appEventName(type)),
    publish(list) {
      for (const e of list) events.emit(appEventName(e.type), (e.local ?? e.data) as never);
    },
  };
}
