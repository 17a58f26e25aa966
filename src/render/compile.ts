import { compile as compileConverter } from 'html-to-text';
import juice from 'juice';
import type { Liquid, Template } from 'liquidjs';
import { marked } from 'marked';
import { NotifyError } from '../errors.ts';
import { isWholeDocument, layoutName, readLayout } from './layout.ts';
import { createBodyEngine, createPlainEngine, parse, RECIPIENT_ROOTS, renderSync, slotify, templateError } from './liquid.ts';
import { type BodySource, type ContentInput, resolveContent } from './source.ts';
import { LinkCollector, markHtml, markText, normalizePlaceholders, type Part, PIXEL_PLACEHOLDER, placePixel, split, withoutPixel } from './tracking-rewrite.ts';

/** What one compiled message (a campaign, a drip step, a one-off) is made of. */
export interface MessageTemplate extends ContentInput {
  subject: string;
  /** layout view name; null/undefined = defaultLayout; false = none */
  layout?: string | false | null;
  /** variables for every recipient (campaign, custom data); `contact` is added per recipient */
  data?: Record<string, unknown>;
  /** false: no open pixel (a `{notify_tracking_pixel}` in the body or layout is dropped); default true */
  trackOpens?: boolean | null;
  /** false: links go straight to their destinations, none through /notify/click; default true */
  trackClicks?: boolean | null;
}

/** One rendering of the markup: literal parts plus per-recipient values. */
export interface Variant {
  /** null for a text-only message */
  html: Part[] | null;
  text: Part[];
}

export interface Slot {
  tpl: Template[];
  /** rendered by the plain (unescaped) engine: a slot of an explicit text part */
  plain: boolean;
  /** a layout's bare `{{ subject }}`: the recipient's subject, escaped, with no render of its own */
  subject?: boolean;
}

export interface CompiledMessage {
  readonly scope: string;
  /** false for a text-only message */
  readonly hasHtml: boolean;
  /** the subject when it is the same for everyone, else its template (rendered per recipient) */
  readonly subject: string | Template[];
  readonly slots: readonly Slot[];
  /** the markup, when it does not depend on the recipient (the common case) */
  readonly base: Variant | null;
  /** the markup for one recipient when a Liquid tag reads `contact` (memoised by rendered body) */
  variant(vars: Record<string, unknown>): Promise<Variant>;
  /** scope-level Liquid data, for rendering slots */
  readonly data: Record<string, unknown>;
  readonly engines: Engines;
}

export interface Engines {
  body: Liquid;
  plain: Liquid;
}

export interface RenderEnv {
  markdownPath: string;
  viewsPath: string;
  defaultLayout: string;
  /** tracking host without trailing slash */
  host: string;
  cwd?: string;
  engines?: Engines;
  /** stores the message's destinations under its scope and returns each one's position */
  storeLinks(scope: string, urls: string[]): Promise<number[]>;
}

const VARIANT_CACHE = 256;
const LAYOUT_ROOTS: ReadonlySet<string> = new Set([...RECIPIENT_ROOTS, 'subject']);
const BARE_SUBJECT = /^\{\{\s*subject\s*\}\}$/;

export function createEngines(): Engines {
  return { body: createBodyEngine(), plain: createPlainEngine() };
}

/**
 * Markdown/HTML -> Liquid (scope data) -> layout -> CSS inlined -> text part -> tracking rewrite ->
 * parts. Everything here runs once per scope; personalize() then only fills values in.
 */
export async function compileMessage(env: RenderEnv, scope: string, tpl: MessageTemplate): Promise<CompiledMessage> {
  const engines = env.engines ?? createEngines();
  const body = resolveContent(tpl, env.markdownPath, env.cwd);
  const data = { ...(tpl.data ?? {}) };
  const subject = compileSubject(engines.plain, tpl.subject, data);
  const slots: Slot[] = [];
  const bodySlots = slotify(engines.body, body.source, 0, body.file);
  slots.push(...bodySlots.slots.map((t) => ({ tpl: t, plain: false })));
  const name = layoutName(tpl.layout, env.defaultLayout);
  const layout = body.kind === 'text' || name === null ? null : readLayout(name, env.viewsPath, env.cwd);
  // a personalised subject makes the layout's {{ subject }} (its <title>) a per-recipient value too
  const layoutRoots = typeof subject === 'string' ? RECIPIENT_ROOTS : LAYOUT_ROOTS;
  const layoutSlots = layout ? slotify(engines.body, layout.source, slots.length, layout.file, layoutRoots) : null;
  if (layoutSlots) slots.push(...layoutSlots.slots.map((t, i) => ({ tpl: t, plain: false, subject: BARE_SUBJECT.test(layoutSlots.outputs[i]) })));
  const textSlots = body.text !== null ? slotify(engines.plain, body.text, slots.length) : null;
  if (textSlots) slots.push(...textSlots.slots.map((t) => ({ tpl: t, plain: true })));
  if (layoutSlots?.perRecipientMarkup || textSlots?.perRecipientMarkup) {
    throw new NotifyError('TEMPLATE_ERROR', 'Layouts and text parts may print contact variables but not use them in tags (if, for, include...)', { scope });
  }
  const layoutTpl = layoutSlots && parse(engines.body, layoutSlots.source, layout!.file);
  const textTpl = textSlots && parse(engines.plain, textSlots.source);
  const layoutData = { ...data, subject: typeof subject === 'string' ? subject : renderSync(engines.plain, subject, { ...data, contact: {} }) };

  const build = async (renderedBody: string): Promise<Variant> => {
    const explicitText = textTpl ? renderSync(engines.plain, textTpl, data) : null;
    const layoutFn = layoutTpl ? (content: string) => renderSync(engines.body, layoutTpl, { ...layoutData, content }) : null;
    return buildVariant(env, scope, body, renderedBody, layoutFn, explicitText, { opens: tpl.trackOpens !== false, clicks: tpl.trackClicks !== false });
  };

  let base: Variant | null = null;
  const cache = new Map<string, Promise<Variant>>();
  const fullBody = bodySlots.perRecipientMarkup ? parse(engines.body, body.source, body.file) : null;
  if (!fullBody) base = await build(renderSync(engines.body, parse(engines.body, bodySlots.source, body.file), data, body.file));
  return {
    scope,
    hasHtml: body.kind !== 'text',
    subject,
    slots,
    base,
    data,
    engines,
    async variant(vars) {
      if (base) return base;
      const rendered = renderSync(engines.body, fullBody!, { ...data, ...vars }, body.file);
      let v = cache.get(rendered);
      if (!v) {
        if (cache.size >= VARIANT_CACHE) cache.delete(cache.keys().next().value!);
        v = build(rendered);
        cache.set(rendered, v);
      }
      return v;
    },
  };
}

function compileSubject(engine: Liquid, subject: string, data: Record<string, unknown>): string | Template[] {
  const tpl = parse(engine, subject);
  if (/\bcontact\b/.test(subject)) return tpl;
  return renderSync(engine, tpl, data);
}

async function buildVariant(
  env: RenderEnv,
  scope: string,
  body: BodySource,
  renderedBody: string,
  layout: ((content: string) => string) | null,
  explicitText: string | null,
  track: { opens: boolean; clicks: boolean },
): Promise<Variant> {
  const links = new LinkCollector();
  if (body.kind === 'text') {
    const text = markText(renderedBody, links, track.clicks);
    const positions = await env.storeLinks(scope, links.urls);
    return { html: null, text: split(text, { host: env.host, scope, positions }) };
  }
  let html = body.kind === 'markdown' ? (marked.parse(renderedBody, { async: false, gfm: true }) as string) : renderedBody;
  html = normalizePlaceholders(html);
  const wrap = layout && !isWholeDocument(html) ? (content: string) => normalizePlaceholders(layout(content)) : null;
  html = inlineCss(track.opens ? placePixel(html, wrap) : withoutPixel(html, wrap));
  const text = explicitText ?? htmlToText(html);
  const markedHtml = markHtml(html, links, track.clicks);
  const markedText = markText(text, links, track.clicks);
  const positions = await env.storeLinks(scope, links.urls);
  const opts = { host: env.host, scope, positions };
  return { html: split(markedHtml, opts), text: split(markedText, opts) };
}

function inlineCss(html: string): string {
  try {
    return juice(html, { preserveImportant: true });
  } catch (err) {
    throw templateError(err, 'CSS inlining');
  }
}

const toText = compileConverter({
  wordwrap: 78,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    { selector: 'title', format: 'skip' },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    // uppercasing headings would also uppercase the URLs and placeholders inside them
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
  ],
});

function htmlToText(html: string): string {
  return toText(html.replaceAll(PIXEL_PLACEHOLDER, ''));
}
