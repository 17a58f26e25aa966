import type { Config } from './config.ts';
import { NotifyError } from './errors.ts';
import { clearFlashCookie, FLASH_ERRORS, FLASH_SUCCESS, type FlashMessages, readFlash } from './http/capture/flash.ts';
import { escapeHtml as esc } from './http/capture/html.ts';
import { safeRelativePath } from './http/capture/redirect.ts';

export type { FlashMessages } from './http/capture/flash.ts';

/** Where the flash cookies can be read from: a web Request, Headers, a node/Express request, a Cookie header, or messages already read. */
export type FlashSource = Request | Headers | { headers: Headers | Record<string, string | string[] | undefined> } | string | FlashMessages;

export interface ListChoice {
  name: string;
  label?: string;
  checked?: boolean;
}

export interface NotifyFormOptions {
  /** where the form posts; default `/notify/capture` (an absolute URL works when notify runs on another host) */
  action?: string;
  /** one list, sent as a hidden field */
  list?: string;
  /** lists the visitor chooses from (checkboxes named `list`) */
  lists?: (string | ListChoice)[];
  /** a path on this site to go to after a successful post; anything else throws */
  redirect?: string;
  /** add the hidden `notify_hp` field; default: `config.honeypot` when `config` is given, else true (the option's default) */
  honeypot?: boolean;
  /** pass `notify.config` so the helpers follow the instance's options */
  config?: Pick<Config, 'honeypot'>;
  /** extra hidden fields; they are stored as contact attributes */
  hidden?: Record<string, string>;
  /** your framework's CSRF field; notify drops it, it is never stored */
  csrf?: { name: string; value: string };
  /** extra attributes of the <form> element (id, class, data-*) */
  attributes?: Record<string, string>;
  /** show the flash message of the last post (read from the `notify_errors` / `notify_success` cookies) */
  flash?: FlashSource;
  /** notify_form only: ask for a name too (true, or a label) */
  name?: boolean | string;
  /** notify_form only: labels */
  emailLabel?: string;
  submitLabel?: string;
}

const ATTRIBUTE_NAME = /^[A-Za-z_:][-A-Za-z0-9_:.]*$/;
const RESERVED_ATTRIBUTES = new Set(['method', 'action', 'enctype', 'accept-charset']);

/**
 * The opening <form> of a capture form with its hidden parts: honeypot, list (hidden or a choice),
 * redirect, your hidden and CSRF fields, and the flash message when `flash` is given. Write your own
 * inputs (at least `email`) and the closing </form> after it. Every value is HTML-escaped.
 */
export function notify_form_open(options: NotifyFormOptions = {}): string {
  const attrs: [string, string][] = [['method', 'post'], ['action', options.action ?? '/notify/capture'], ['accept-charset', 'UTF-8']];
  for (const [name, value] of Object.entries(options.attributes ?? {})) {
    if (!ATTRIBUTE_NAME.test(name) || RESERVED_ATTRIBUTES.has(name.toLowerCase())) throw new NotifyError('INVALID_INPUT', `Form attribute '${name}' is not allowed`, { attribute: name });
    attrs.push([name, String(value)]);
  }
  if (!attrs.some(([n]) => n === 'class')) attrs.push(['class', 'notify-form']);
  const parts = [`<form ${attrs.map(([n, v]) => `${n}="${esc(v)}"`).join(' ')}>`];
  if (options.flash !== undefined) parts.push(flashHtml(options.flash));
  if (options.honeypot ?? options.config?.honeypot ?? true) parts.push(honeypotHtml());
  if (options.csrf) parts.push(hiddenInput(options.csrf.name, options.csrf.value));
  if (options.redirect !== undefined) {
    if (!safeRelativePath(options.redirect)) throw new NotifyError('INVALID_INPUT', `redirect must be a path on this site (got ${JSON.stringify(options.redirect)})`, { redirect: options.redirect });
    parts.push(hiddenInput('redirect', options.redirect));
  }
  if (options.list !== undefined) parts.push(hiddenInput('list', options.list));
  if (options.lists?.length) parts.push(listChoice(options.lists));
  for (const [name, value] of Object.entries(options.hidden ?? {})) parts.push(hiddenInput(name, value));
  return parts.join('\n');
}

/** A complete capture form: notify_form_open plus email (and optionally name) fields, a button and </form>. */
export function notify_form(options: NotifyFormOptions = {}): string {
  const nameLabel = options.name === true ? 'Name' : typeof options.name === 'string' ? options.name : undefined;
  const fields = [
    notify_form_open(options),
    nameLabel !== undefined ? `<label>${esc(nameLabel)} <input type="text" name="name" autocomplete="name" maxlength="200"></label>` : '',
    `<label>${esc(options.emailLabel ?? 'Email')} <input type="email" name="email" autocomplete="email" required maxlength="254"></label>`,
    `<button type="submit">${esc(options.submitLabel ?? 'Subscribe')}</button>`,
    '</form>',
  ];
  return fields.filter(Boolean).join('\n');
}

/**
 * Reads the flash message of the last capture post back: `errors` (cookie `notify_errors`) and
 * `success` (cookie `notify_success`). `clear` holds Set-Cookie values that delete both, for a
 * page that wants the message shown once (they also expire by themselves after a minute).
 */
export function notify_flash(source: FlashSource | null | undefined): FlashMessages & { clear: string[] } {
  return { ...toMessages(source), clear: [clearFlashCookie(FLASH_ERRORS), clearFlashCookie(FLASH_SUCCESS)] };
}

function toMessages(source: FlashSource | null | undefined): FlashMessages {
  if (!source) return { errors: [], success: [] };
  if (typeof source === 'string') return readFlash(source);
  if ('errors' in source && 'success' in source) return { errors: [...source.errors], success: [...source.success] };
  const headers = source instanceof Headers ? source : source.headers;
  if (headers instanceof Headers) return readFlash(headers.get('cookie'));
  const cookie = (headers as Record<string, string | string[] | undefined>).cookie;
  return readFlash(Array.isArray(cookie) ? cookie.join('; ') : cookie);
}

function flashHtml(source: FlashSource): string {
  const { errors, success } = toMessages(source);
  const block = (cls: string, role: string, messages: string[]) =>
    messages.length ? `<div class="notify-flash ${cls}" role="${role}">${messages.map((m) => `<p>${esc(m)}</p>`).join('')}</div>` : '';
  return block('notify-errors', 'alert', errors) + block('notify-success', 'status', success);
}

/** Off-screen rather than type=hidden: bots skip hidden inputs but fill text ones. Humans never see or reach it. */
function honeypotHtml(): string {
  return '<div class="notify-hp" style="position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden" aria-hidden="true"><label>Leave this field empty <input type="text" name="notify_hp" value="" tabindex="-1" autocomplete="off"></label></div>';
}

function hiddenInput(name: string, value: string): string {
  return `<input type="hidden" name="${esc(name)}" value="${esc(String(value))}">`;
}

function listChoice(lists: (string | ListChoice)[]): string {
  const boxes = lists.map((l) => {
    const c = typeof l === 'string' ? { name: l } : l;
    return `<label><input type="checkbox" name="list" value="${esc(c.name)}"${c.checked ? ' checked' : ''}> ${esc(c.label ?? c.name)}</label>`;
  });
  return `<fieldset class="notify-lists">${boxes.join('')}</fieldset>`;
}
