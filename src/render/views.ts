import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Liquid } from 'liquidjs';
import { NotifyError } from '../errors.ts';

/** The views shipped with the package: views/notify/<name>.liquid */
export const SHIPPED_VIEWS = resolve(dirname(fileURLToPath(import.meta.url)), '../../views');

export interface Views {
  /** renders `notify/<name>` (e.g. `notify/unsubscribe_success`); an application file at the same path under viewsPath wins */
  render(name: string, data?: Record<string, unknown>): Promise<string>;
  /** whether the application overrides this view */
  isOverridden(name: string): boolean;
  /** the engine, for templates that are strings rather than files (email bodies) */
  readonly engine: Liquid;
}

const NAME = /^[a-z0-9_]+(\/[a-z0-9_]+)*$/;

/**
 * Liquid is sandboxed (no code, only filters), escapes every output by default (`| raw` opts out),
 * and is bounded in parse and render work so a broken or hostile template cannot hang the process.
 */
export function createViews(viewsPath: string, cwd = process.cwd()): Views {
  const appRoot = resolve(cwd, viewsPath);
  const engine = new Liquid({
    root: [appRoot, SHIPPED_VIEWS],
    layouts: [appRoot, SHIPPED_VIEWS],
    partials: [appRoot, SHIPPED_VIEWS],
    extname: '.liquid',
    outputEscape: 'escape',
    ownPropertyOnly: true,
    strictFilters: true,
    cache: true,
    parseLimit: 1e7,
    renderLimit: 2000,
    memoryLimit: 1e8,
  });
  return {
    engine,
    isOverridden: (name) => existsSync(resolve(appRoot, `${name}.liquid`)),
    async render(name, data = {}) {
      if (!NAME.test(name)) throw new NotifyError('INVALID_INPUT', `Invalid view name '${name}'`);
      try {
        return await engine.renderFile(name, data);
      } catch (err) {
        throw new NotifyError('TEMPLATE_ERROR', `View ${name} could not be rendered: ${(err as Error).message}`, { view: name }, { cause: err });
      }
    },
  };
}
