import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NotifyError } from '../errors.ts';
import { SHIPPED_VIEWS } from './views.ts';

const LAYOUT_NAME = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

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
