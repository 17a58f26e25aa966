import { classifyRequest, type MachineReason } from './engagement.ts';

/** distinct user agents remembered; past this the memory starts over */
const KNOWN_REQUESTS = 1000;
const LONGEST_KEPT = 512;

/**
 * classifyRequest, remembered per method and user agent: a batch's thousands of events come from a
 * few mail clients and proxies, and matching a browser's user agent against the bot patterns
 * costs more than the rest of the event's labelling.
 */
export function requestReasons(): (method: string, userAgent: string) => MachineReason | null {
  const known = new Map<string, MachineReason | null>();
  return (method, userAgent) => {
    // a header value holds no newline; an odd long one is not kept (the memory stays small)
    if (userAgent.length > LONGEST_KEPT) return classifyRequest(method, userAgent);
    const key = method === 'GET' ? userAgent : `${method}\n${userAgent}`;
    let reason = known.get(key);
    if (reason === undefined) {
      if (known.size >= KNOWN_REQUESTS) known.clear();
      reason = classifyRequest(method, userAgent);
      known.set(key, reason);
    }
    return reason;
  };
}
