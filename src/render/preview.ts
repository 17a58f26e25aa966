import { type CompiledMessage, compileMessage, type MessageTemplate, type RenderEnv } from './compile.ts';
import { escapeHtml } from './liquid.ts';
import { joinParts, personalize } from './personalize.ts';

/** What a recipient would read, without anything that reports back to the server. */
export interface RenderedPreview {
  subject: string;
  /** null for a text-only message */
  html: string | null;
  text: string;
}

/**
 * The host the compiled message's tracked URLs point at while previewing. It never resolves
 * (.invalid is reserved), and every URL built on it is replaced below: a preview has no pixel, and
 * its links go straight to their destinations.
 */
const HOST = 'https://preview.notify.invalid';
const CLICK = new RegExp(`${HOST.replaceAll('.', '\\.')}/notify/click/preview\\?l=preview\\.(\\d+)\\.preview`, 'g');
const PIXEL = `<img src="${HOST}/notify/open/preview" width="1" height="1" alt="">`;

/**
 * The message through the same compile and personalise steps a delivery takes (markdown, Liquid with
 * the contact, layout, CSS inlining, text part), with no link stored and no token issued.
 */
export async function renderPreview(env: Omit<RenderEnv, 'host' | 'storeLinks'>, tpl: MessageTemplate, contact: Record<string, unknown> | undefined, unsubscribeUrl: string): Promise<RenderedPreview> {
  const urls: string[] = [];
  const storeLinks = async (_scope: string, found: string[]) => {
    const first = urls.push(...found) - found.length;
    return found.map((_, i) => first + i);
  };
  const compiled: CompiledMessage = await compileMessage({ ...env, host: HOST, storeLinks }, 'preview', tpl);
  const r = await personalize(compiled, { token: 'preview', sig: 'preview', unsubscribeUrl, preferencesUrl: unsubscribeUrl, contact });
  const untracked = (s: string, esc: (u: string) => string) => s.replaceAll(PIXEL, '').replace(CLICK, (_, n: string) => esc(urls[Number(n)] ?? ''));
  return {
    subject: r.subject,
    html: r.variant.html ? untracked(joinParts(r.variant.html, r.recipient, r.htmlValues), escapeHtml) : null,
    text: untracked(joinParts(r.variant.text, r.recipient, r.textValues), (u) => u),
  };
}
