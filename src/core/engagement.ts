/**
 * Human or machine? A pure classifier for open and click events, run when a batch of events is
 * written (that is when the send's delivery time is at hand). Every event is still recorded; the
 * label only decides whether it counts towards human_opened / human_clicked.
 *
 * The rules are deliberately conservative signals that are well documented in the industry. Add a
 * rule by adding a line to RULES.
 */
export type EngagementType = 'open' | 'click';

export interface EngagementInput {
  type: EngagementType;
  /** HTTP method of the tracking request */
  method: string;
  userAgent: string;
  /** epoch ms of the request */
  at: number;
  /** epoch ms the send was handed to the provider, when known */
  sentAt: number | null;
  /** this click is part of a burst: several different links of one send followed within BURST_WINDOW_MS */
  burst?: boolean;
}

export type MachineReason =
  | 'head_request'
  | 'no_user_agent'
  | 'apple_mail_privacy'
  | 'google_image_proxy'
  | 'bot_user_agent'
  | 'too_soon_after_delivery'
  | 'link_burst';

export interface EngagementLabel {
  isMachine: boolean;
  reason: MachineReason | null;
}

/** A click this soon after delivery is a security scanner following links, not a reader. */
export const MIN_HUMAN_CLICK_DELAY_MS = 5_000;
/** A person reads, then clicks one link; a scanner requests every link of the message at once. */
export const BURST_WINDOW_MS = 2_000;
export const BURST_MIN_LINKS = 3;

// Apple Mail Privacy Protection prefetches every image through Apple's proxy with this bare UA,
// whether or not the message is ever read.
const APPLE_MPP = /^Mozilla\/5\.0$/;
// Gmail fetches images through its proxy and caches them: the reader is hidden and repeat opens
// never reach us, so such an open is not evidence of a particular human reading.
const GOOGLE_PROXY = /GoogleImageProxy|ggpht\.com/i;
// Link scanners and HTTP libraries announce themselves. `bot` must be followed by a version or
// separator so phone names like "Cubot Note" do not match.
const BOT =
  /bot[/;+)-]|\bbot\b|crawler|spider|HeadlessChrome|PhantomJS|python-requests|python-urllib|aiohttp|\bcurl\/|\bwget\/|Go-http-client|okhttp|Java\/|libwww|Barracuda|Mimecast|Proofpoint|urldefense|Symantec|Forcepoint|\bnode-fetch\b|\bundici\b|axios\//i;

type Rule = (e: EngagementInput) => MachineReason | null;

/** What the request alone tells (method and user agent): checked first, in this order. */
const REQUEST_RULES: ((method: string, userAgent: string) => MachineReason | null)[] = [
  (method) => (method === 'HEAD' ? 'head_request' : null),
  (_, ua) => (ua.trim() === '' ? 'no_user_agent' : null),
  (_, ua) => (APPLE_MPP.test(ua) ? 'apple_mail_privacy' : null),
  (_, ua) => (GOOGLE_PROXY.test(ua) ? 'google_image_proxy' : null),
  (_, ua) => (BOT.test(ua) ? 'bot_user_agent' : null),
];

const RULES: Rule[] = [
  (e) => (e.type === 'click' && e.sentAt !== null && e.at - e.sentAt < MIN_HUMAN_CLICK_DELAY_MS ? 'too_soon_after_delivery' : null),
  (e) => (e.type === 'click' && e.burst ? 'link_burst' : null),
];

/** The machine reason the request alone gives, or null: the same for every request with this method and user agent. */
export function classifyRequest(method: string, userAgent: string): MachineReason | null {
  for (const rule of REQUEST_RULES) {
    const reason = rule(method, userAgent);
    if (reason) return reason;
  }
  return null;
}

const HUMAN: EngagementLabel = Object.freeze({ isMachine: false, reason: null });
const MACHINE = new Map<MachineReason, EngagementLabel>();
const machine = (reason: MachineReason): EngagementLabel => {
  let label = MACHINE.get(reason);
  if (!label) MACHINE.set(reason, (label = Object.freeze({ isMachine: true, reason })));
  return label;
};

/**
 * `requestReason`: classifyRequest(e.method, e.userAgent), when the caller has it at hand (a
 * batch's events mostly share a few user agents, and the user-agent rules are its costliest part).
 * The label returned is shared and frozen.
 */
export function classifyEngagement(e: EngagementInput, requestReason: MachineReason | null = classifyRequest(e.method, e.userAgent)): EngagementLabel {
  if (requestReason) return machine(requestReason);
  for (const rule of RULES) {
    const reason = rule(e);
    if (reason) return machine(reason);
  }
  return HUMAN;
}

export interface ClickPoint<K> {
  key: K;
  sendId: number;
  link: number | null;
  at: number;
}

/**
 * The clicks that belong to a link burst: at least BURST_MIN_LINKS different links of the same
 * send within BURST_WINDOW_MS. Every click inside such a window is marked, the first ones too,
 * so the caller can relabel clicks it already stored.
 */
export function findLinkBursts<K>(clicks: ClickPoint<K>[]): Set<K> {
  const bySend = new Map<number, ClickPoint<K>[]>();
  for (const c of clicks) {
    if (c.link === null) continue;
    const list = bySend.get(c.sendId);
    if (list) list.push(c);
    else bySend.set(c.sendId, [c]);
  }
  const out = new Set<K>();
  for (const list of bySend.values()) {
    if (new Set(list.map((c) => c.link)).size < BURST_MIN_LINKS) continue;
    list.sort((a, b) => a.at - b.at);
    const inWindow = new Map<number | null, number>();
    let start = 0;
    for (let end = 0; end < list.length; end++) {
      inWindow.set(list[end].link, (inWindow.get(list[end].link) ?? 0) + 1);
      while (list[end].at - list[start].at > BURST_WINDOW_MS) {
        const n = inWindow.get(list[start].link)! - 1;
        if (n === 0) inWindow.delete(list[start].link);
        else inWindow.set(list[start].link, n);
        start++;
      }
      if (inWindow.size >= BURST_MIN_LINKS) for (let i = start; i <= end; i++) out.add(list[i].key);
    }
  }
  return out;
}
