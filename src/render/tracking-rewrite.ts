import { SLOT_CLOSE, SLOT_OPEN } from './liquid.ts';

/**
 * Tracking rewrite, done once per compiled message. Links, the pixel and the unsubscribe URL become
 * internal markers; `split` then turns the finished text into parts where each per-recipient value
 * (send token, link signature, unsubscribe URL, Liquid slot) is a number, so a recipient costs one
 * array walk and no parsing.
 */
export const TOKEN = -1;
export const SIG = -2;
export const UNSUB = -3;
export const PREFS = -4;
/** A piece of a compiled body: literal text, or a per-recipient value (TOKEN, SIG, UNSUB, PREFS, or slot index >= 0). */
export type Part = string | number;

const M_OPEN = '\uE002';
const M_CLOSE = '\uE003';
const UNSUB_MARK = `${M_OPEN}U${M_CLOSE}`;
const PREFS_MARK = `${M_OPEN}R${M_CLOSE}`;
const PIXEL_MARK = `${M_OPEN}P${M_CLOSE}`;
const linkMark = (n: number) => `${M_OPEN}L${n}${M_CLOSE}`;

export const PIXEL_PLACEHOLDER = '{notify_tracking_pixel}';
export const UNSUB_PLACEHOLDER = '{notify_unsubscribe_url}';
export const PREFS_PLACEHOLDER = '{notify_preferences_url}';

/** Collects the distinct http(s) destinations of one message in order of first appearance. */
export class LinkCollector {
  readonly urls: string[] = [];
  private readonly seen = new Map<string, number>();
  register(url: string): number {
    let n = this.seen.get(url);
    if (n === undefined) {
      n = this.urls.length;
      this.urls.push(url);
      this.seen.set(url, n);
    }
    return n;
  }
}

/** Markdown turns `{x}` in a link into `%7Bx%7D` and markers into percent-escapes: undo that first. */
export function normalizePlaceholders(html: string): string {
  return html
    .replace(/%7Bnotify_(unsubscribe_url|preferences_url|tracking_pixel)%7D/gi, '{notify_$1}')
    .replace(/%EE%80%80(\d+)%EE%80%81/gi, `${SLOT_OPEN}$1${SLOT_CLOSE}`);
}

const BODY_PIXEL = `${M_OPEN}B${M_CLOSE}`;

/**
 * One pixel placeholder per HTML part, so one open is one event: the body's first (where its author
 * put it) wins over the layout's; else the layout's first; else one is added before </body>, or at
 * the end of a fragment. `wrap` puts the body into its layout (null: no layout).
 */
export function placePixel(body: string, wrap: ((content: string) => string) | null): string {
  if (!wrap) return onePixel(body);
  if (!body.includes(PIXEL_PLACEHOLDER)) return onePixel(wrap(body));
  const held = onePixel(body).replace(PIXEL_PLACEHOLDER, BODY_PIXEL);
  return onePixel(wrap(held).replaceAll(PIXEL_PLACEHOLDER, '').replace(BODY_PIXEL, PIXEL_PLACEHOLDER));
}

/** trackOpens off: the body in its layout with every pixel placeholder (the author's or the layout's) dropped. */
export function withoutPixel(body: string, wrap: ((content: string) => string) | null): string {
  return (wrap ? wrap(body) : body).replaceAll(PIXEL_PLACEHOLDER, '');
}

/** Keeps the first pixel placeholder and drops the others; adds one when there is none. */
function onePixel(html: string): string {
  const first = html.indexOf(PIXEL_PLACEHOLDER);
  if (first === -1) {
    const at = html.search(/<\/body\s*>/i);
    return at === -1 ? html + PIXEL_PLACEHOLDER : html.slice(0, at) + PIXEL_PLACEHOLDER + html.slice(at);
  }
  const end = first + PIXEL_PLACEHOLDER.length;
  return html.slice(0, end) + html.slice(end).replaceAll(PIXEL_PLACEHOLDER, '');
}

const TAG = /<(a|area)\b((?:[^>"']|"[^"]*"|'[^']*')*)>/gi;
const HREF = /(\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;
const TRACKABLE = /^https?:\/\//i;

/**
 * Every href beginning with http:// or https:// becomes a link marker; the unsubscribe and preferences placeholders,
 * mailto:, tel: and anything else stay as they are. A URL that differs per recipient (it holds a
 * Liquid slot) cannot be one of the message's stored destinations and is left untracked.
 */
export function markHtml(html: string, links: LinkCollector, trackClicks = true): string {
  if (!trackClicks) return markPlaceholders(html);
  const marked = html.replace(TAG, (tag: string, _name: string, attrs: string) => {
    const m = HREF.exec(attrs);
    if (!m) return tag;
    const url = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '').trim();
    if (!TRACKABLE.test(url) || url.includes(SLOT_OPEN)) return tag;
    const replaced = attrs.slice(0, m.index) + `${m[1]}"${linkMark(links.register(url))}"` + attrs.slice(m.index + m[0].length);
    return tag.slice(0, tag.length - attrs.length - 1) + replaced + '>';
  });
  return markPlaceholders(marked);
}

const TEXT_URL = /https?:\/\/[^\s<>"'[\]{}|\\^`\uE000-\uE003]+/gi;

/** The same rewrite for a plain-text part: bare http(s) URLs become link markers. */
export function markText(text: string, links: LinkCollector, trackClicks = true): string {
  if (!trackClicks) return markPlaceholders(text.replaceAll(PIXEL_PLACEHOLDER, ''));
  const marked = text.replace(TEXT_URL, (found: string) => {
    const url = trimProse(found);
    return linkMark(links.register(url)) + found.slice(url.length);
  });
  return markPlaceholders(marked.replaceAll(PIXEL_PLACEHOLDER, ''));
}

function markPlaceholders(s: string): string {
  return s.replaceAll(UNSUB_PLACEHOLDER, UNSUB_MARK).replaceAll(PREFS_PLACEHOLDER, PREFS_MARK).replaceAll(PIXEL_PLACEHOLDER, PIXEL_MARK);
}

/** Trailing sentence punctuation is not part of a URL in prose; a closing paren is unless it closes one of the URL's own. */
function trimProse(url: string): string {
  let end = url.length;
  while (end > 0) {
    const c = url[end - 1];
    if ('.,;:!?'.includes(c)) end--;
    else if (c === ')' && url.slice(0, end).split('(').length <= url.slice(0, end).split(')').length - 1) end--;
    else break;
  }
  return url.slice(0, end);
}

export interface SplitOptions {
  /** `{tracking_host}` without a trailing slash */
  host: string;
  scope: string;
  /** stored position of each collected link */
  positions: number[];
}

const MARK = /\uE002(U|R|P|L\d+)\uE003|\uE000(\d+)\uE001/g;

/** Turns marked text into parts; adjacent literal text is merged. */
export function split(s: string, opts: SplitOptions): Part[] {
  const parts: Part[] = [];
  const lit = (text: string) => {
    if (text === '') return;
    if (typeof parts[parts.length - 1] === 'string') parts[parts.length - 1] += text;
    else parts.push(text);
  };
  let last = 0;
  for (const m of s.matchAll(MARK)) {
    lit(s.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] !== undefined) parts.push(Number(m[2]));
    else if (m[1] === 'U') parts.push(UNSUB);
    else if (m[1] === 'R') parts.push(PREFS);
    else if (m[1] === 'P') {
      lit(`<img src="${opts.host}/notify/open/`);
      parts.push(TOKEN);
      lit('" width="1" height="1" alt="">');
    } else {
      lit(`${opts.host}/notify/click/`);
      parts.push(TOKEN);
      lit(`?l=${opts.scope}.${opts.positions[Number(m[1].slice(1))]}.`);
      parts.push(SIG);
    }
  }
  lit(s.slice(last));
  return parts;
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** Attribute values as the browser will read them (enough for URLs: numeric and the common named entities). */
export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[e.toLowerCase()] ?? whole;
  });
}
