import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { NotifyError } from '../errors.ts';

/** What a campaign, a drip step or a one-off send says its body is. Exactly one of html, markdown, markdownFile or text. */
export interface ContentInput {
  html?: string | null;
  markdown?: string | null;
  markdownFile?: string | null;
  /** plain-text body; with html or markdown it replaces the generated text part */
  text?: string | null;
}

export interface BodySource {
  kind: 'html' | 'markdown' | 'text';
  source: string;
  /** explicit plain-text part (only with html or markdown) */
  text: string | null;
  /** for error messages */
  file?: string;
}

const MAX_BODY = 2 * 1024 * 1024;

/** Checks the shape without touching the file system (used when content is stored). */
export function checkContent(input: ContentInput): void {
  const given = (['html', 'markdown', 'markdownFile'] as const).filter((k) => input[k] != null && input[k] !== '');
  if (given.length > 1) throw new NotifyError('INVALID_INPUT', `Give only one of html, markdown or markdownFile (got ${given.join(', ')})`, { fields: given });
  if (given.length === 0 && (input.text == null || input.text === '')) {
    throw new NotifyError('INVALID_INPUT', 'A message needs a body: html, markdown, markdownFile or text', { field: 'html' });
  }
  for (const k of ['html', 'markdown', 'markdownFile', 'text'] as const) {
    const v = input[k];
    if (v != null && (typeof v !== 'string' || v.length > MAX_BODY)) throw new NotifyError('INVALID_INPUT', `${k} must be a string of at most ${MAX_BODY} characters`, { field: k });
  }
}

export function resolveContent(input: ContentInput, markdownPath: string, cwd = process.cwd()): BodySource {
  checkContent(input);
  const text = input.text ?? null;
  if (input.html) return { kind: 'html', source: input.html, text };
  if (input.markdown) return { kind: 'markdown', source: input.markdown, text };
  if (input.markdownFile) {
    const path = resolveMarkdownFile(input.markdownFile, markdownPath, cwd);
    return { kind: 'markdown', source: readFileSync(path, 'utf8'), text, file: input.markdownFile };
  }
  return { kind: 'text', source: text ?? '', text: null };
}

/**
 * A markdown file named relative to markdownPath (default: the working folder). Absolute paths, `..`
 * and symlinks that lead outside the base are refused, so a stored campaign cannot read other files.
 */
export function resolveMarkdownFile(file: string, markdownPath: string, cwd = process.cwd()): string {
  if (typeof file !== 'string' || file.includes('\0') || isAbsolute(file)) {
    throw new NotifyError('PATH_ESCAPE', `markdownFile must be a relative path under markdownPath (got ${JSON.stringify(file)})`, { file });
  }
  const base = resolve(cwd, markdownPath || '.');
  const path = resolve(base, file);
  if (!inside(base, path)) throw new NotifyError('PATH_ESCAPE', `markdownFile ${JSON.stringify(file)} is outside markdownPath`, { file });
  if (!existsSync(path)) throw new NotifyError('NOT_FOUND', `markdownFile ${JSON.stringify(file)} does not exist under ${base}`, { file });
  const real = realpathSync(path);
  if (!inside(realpathSync(base), real)) throw new NotifyError('PATH_ESCAPE', `markdownFile ${JSON.stringify(file)} links outside markdownPath`, { file });
  return real;
}

function inside(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}
