import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NotifyError } from '../errors.ts';
import { SHIPPED_VIEWS } from './views.ts';

const LAYOUT_NAME = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

/**
 * The layout a message asks for: a view name, `false` for none, null/undefined/'' for the default.
 * Any other value is refused rather than read as a name (`true` is not a layout called "true").
 */
export function layoutName(layout: unknown, defaultLayout: string): string | null {
  if (layout === false) return null;
  if (layout === undefined || layout === null || layout === '') return defaultLayout;
  if (typeof layout !== 'string') throw new NotifyError('INVALID_INPUT', `layout must be a view name or false (got ${JSON.stringify(layout) ?? typeof layout})`, { field: 'layout' });
  return layout;
}

/** A body that is a document of its own (a doctype or an <html> element) is sent as it is, never nested in a layout. */
export function isWholeDocument(html: string): boolean {
  return /<!doctype[\s>]|<html[\s>]/i.test(html);
}

/**
 * The source of a layout view: `<viewsPath>/<name>.liquid` when the application has one, else the
 * shipped file. Read as source (not rendered through the views engine) so its per-recipient outputs
 * can be split out like the body's.
 */
export function readLayout(name: string, viewsPath: string, cwd = process.cwd()): { source: string; file: string } {
  if (!LAYOUT_NAME.test(name)) throw new NotifyError('INVALID_INPUT', `Invalid layout name ${JSON.stringify(name)} (use e.g. notify/layouts/default)`, { layout: name });
  for (const root of [resolve(cwd, viewsPath), SHIPPED_VIEWS]) {
    const file = resolve(root, `${name}.liquid`);
    if (existsSync(file)) return { source: readFileSync(file, 'utf8'), file };
  }
  throw new NotifyError('NOT_FOUND', `Layout ${name} not found under ${viewsPath} or the shipped views`, { layout: name });
}
