import { Liquid, type Template, Tokenizer, TypeGuards } from 'liquidjs';
import { NotifyError } from '../errors.ts';

/**
 * Per-recipient variables. Everything else a template sees (campaign, custom data) is the same for
 * every recipient of a compiled message, so it is rendered once per scope.
 */
export const RECIPIENT_ROOTS = new Set(['contact']);

/** Markers for per-recipient values, from the Unicode private use area: no template, markdown or CSS step touches them. */
export const SLOT_OPEN = '\uE000';
export const SLOT_CLOSE = '\uE001';
export const slotMarker = (i: number) => `${SLOT_OPEN}${i}${SLOT_CLOSE}`;
export const SLOT_PATTERN = /\uE000(\d+)\uE001/g;

export interface Slotted {
  /** the template with every per-recipient output replaced by a marker; render it once per scope */
  source: string;
  /** the replaced outputs, parsed; slot i renders marker i for one recipient */
  slots: Template[][];
  /** each replaced output as written (without whitespace control), e.g. `{{ subject }}` */
  outputs: string[];
  /**
   * a tag (if, for, assign, ...) reads a per-recipient variable, so the markup itself differs per
   * recipient: the whole template must be rendered per recipient
   */
  perRecipientMarkup: boolean;
}

const OPAQUE_TAGS = new Set(['include', 'render', 'layout', 'liquid']);

/**
 * Splits a Liquid template into what is the same for everyone and the outputs that read `contact`.
 * `{{ contact.name | default: "friend" }}` becomes a marker plus a tiny template rendered per recipient
 * (a few microseconds); a tag reading `contact` makes the whole body per recipient (slow path, rare).
 * `outputRoots` widens what counts as per-recipient in outputs only (a layout's `subject`, when the
 * subject itself is personalised).
 */
export function slotify(engine: Liquid, source: string, firstSlot = 0, file?: string, outputRoots: ReadonlySet<string> = RECIPIENT_ROOTS): Slotted {
  const tokens = tokenize(engine, source, file);
  const slots: Template[][] = [];
  const outputs: string[] = [];
  let out = '';
  let perRecipientMarkup = false;
  for (const token of tokens) {
    const text = token.getText();
    if (TypeGuards.isTagToken(token)) {
      if (OPAQUE_TAGS.has(token.name) || mentions(text, RECIPIENT_ROOTS)) perRecipientMarkup = true;
    } else if (TypeGuards.isOutputToken(token) && mentions(text, outputRoots)) {
      const roots = globalRoots(engine, text, file);
      if (roots.some((r) => outputRoots.has(r))) {
        const left = text.startsWith('{{-') ? '{{-' : '{{';
        const right = text.endsWith('-}}') ? '-}}' : '}}';
        out += `${left} '${slotMarker(firstSlot + slots.length)}' ${right}`;
        const output = text.replace(/^\{\{-/, '{{').replace(/-\}\}$/, '}}');
        slots.push(parse(engine, output, file));
        outputs.push(output);
        continue;
      }
    }
    out += text;
  }
  return { source: out, slots, outputs, perRecipientMarkup };
}

function mentions(text: string, roots: ReadonlySet<string>): boolean {
  for (const root of roots) if (new RegExp(`\\b${root}\\b`).test(text)) return true;
  return false;
}

function tokenize(engine: Liquid, source: string, file?: string) {
  try {
    const options = (engine as unknown as { options: { operators: never } }).options;
    return new Tokenizer(source, options.operators, file).readTopLevelTokens(options as never);
  } catch (err) {
    throw templateError(err, file);
  }
}

function globalRoots(engine: Liquid, text: string, file?: string): string[] {
  try {
    return engine.globalVariablesSync(text);
  } catch (err) {
    throw templateError(err, file);
  }
}

export function parse(engine: Liquid, source: string, file?: string): Template[] {
  try {
    return engine.parse(source, file);
  } catch (err) {
    throw templateError(err, file);
  }
}

export function renderSync(engine: Liquid, tpl: Template[], data: Record<string, unknown>, file?: string): string {
  try {
    return engine.renderSync(tpl, data) as string;
  } catch (err) {
    throw templateError(err, file);
  }
}

export function templateError(err: unknown, file?: string): NotifyError {
  const where = file ? ` in ${file}` : '';
  return new NotifyError('TEMPLATE_ERROR', `Template error${where}: ${(err as Error).message}`, { file }, { cause: err });
}

const LIMITS = { parseLimit: 1e7, renderLimit: 2000, memoryLimit: 1e8 };

/** A Liquid engine for header values (subject): no HTML escaping, same sandbox and limits as the views. */
export function createPlainEngine(): Liquid {
  return new Liquid({ ownPropertyOnly: true, strictFilters: true, cache: false, ...LIMITS });
}

/** A Liquid engine for email bodies given as strings: escaped output, sandboxed, bounded. */
export function createBodyEngine(): Liquid {
  return new Liquid({ outputEscape: 'escape', ownPropertyOnly: true, strictFilters: true, cache: false, ...LIMITS });
}

/** Liquid's own output escaping (its `escape` filter), for values filled in without a render. */
export function escapeHtml(s: string): string {
  return /[&<>"']/.test(s) ? s.replace(/[&<>"']/g, (c) => ESCAPES[c]) : s;
}
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#34;': '"', '&#x27;': "'" };

/** Undoes Liquid's output escaping, for the plain-text part. */
export function unescapeHtml(s: string): string {
  return s.indexOf('&') === -1 ? s : s.replace(/&(?:amp|lt|gt|quot|#39|#34|#x27);/g, (m) => ENTITIES[m]);
}
