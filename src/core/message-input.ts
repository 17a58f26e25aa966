import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { readLayout } from '../render/layout.ts';
import { createBodyEngine, createPlainEngine, parse } from '../render/liquid.ts';
import { type ContentInput, checkContent, resolveMarkdownFile } from '../render/source.ts';
import { checkSubject } from './headers.ts';

export const optionalString = (v: unknown, field: string, max: number): string | null => {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || v.length > max) throw new NotifyError('INVALID_INPUT', `${field} must be a string of at most ${max} characters`, { field });
  return v;
};

/** true, false, or null/undefined for "the option's default"; anything else is INVALID_INPUT. */
export const optionalFlag = (v: unknown, field: string): boolean | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'boolean') throw new NotifyError('INVALID_INPUT', `${field} must be true or false (got ${JSON.stringify(v)})`, { field });
  return v;
};

/**
 * The checks a stored message (a campaign, a drip step) gets when it is created, so a broken one
 * fails then and not at its first send: subject, exactly one body, the markdown file and layout
 * exist, Liquid parses. Returns the checked subject and layout (a name, false for none, null for the default).
 */
export function checkMessage(ctx: Pick<Context, 'config'>, input: ContentInput & { subject: unknown; layout?: unknown }, field = ''): { subject: string; layout: string | false | null } {
  const subject = checkSubject(input.subject);
  checkContent(input);
  if (input.markdownFile) resolveMarkdownFile(input.markdownFile, ctx.config.markdownPath);
  const layout = input.layout === false ? false : optionalString(input.layout, `${field}layout`, 200);
  if (layout && !/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(layout)) throw new NotifyError('INVALID_INPUT', `Invalid ${field}layout name ${JSON.stringify(layout)}`, { field: `${field}layout` });
  // a misspelt layout fails now, like a missing markdownFile, not at the first send
  if (layout) readLayout(layout, ctx.config.viewsPath);
  // Liquid syntax errors surface now rather than at the first send.
  parse(createPlainEngine(), subject);
  for (const body of [input.html, input.markdown]) if (body) parse(createBodyEngine(), body);
  if (input.text) parse(createPlainEngine(), input.text);
  return { subject, layout };
}
