import { NotifyError } from './errors.ts';

/** One `NAME=value` line of a .env file. */
export interface EnvFileEntry {
  name: string;
  value: string;
  /** 1-based, for messages that point at the line */
  line: number;
}

const ASSIGNMENT = /^(?:export\s+)?([A-Za-z_][\w.-]*)\s*=\s*(.*)$/;
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

/**
 * Reads the text of a .env file: `NAME=value` per line, spaces around `=` allowed, an optional
 * `export ` prefix (so the file can also be sourced by a shell), `#` comments on their own line or
 * after a value. Values may be single-quoted (taken literally) or double-quoted (`\n`, `\r`, `\t`,
 * `\"` and `\\` are escapes; any other backslash is kept); a quoted value ends on its own line.
 * No variable expansion: `$HOME` stays as typed. Any other line is an error naming the file and line,
 * since a line skipped in silence is a setting that quietly does not apply.
 */
export function parseEnvFile(text: string, path: string): EnvFileEntry[] {
  const entries: EnvFileEntry[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const m = ASSIGNMENT.exec(trimmed);
    if (!m) throw lineError(path, line, `expected NAME=value, got ${JSON.stringify(shorten(trimmed))}`);
    entries.push({ name: m[1], value: parseValue(m[2], path, line), line });
  });
  return entries;
}

function parseValue(rest: string, path: string, line: number): string {
  const quote = rest[0];
  if (quote !== '"' && quote !== "'") {
    // `#` starts a comment only at the start or after a space, so `pass#word` and URL fragments survive
    return rest.replace(/(^|\s+)#.*$/, '').trim();
  }
  let value = '';
  let i = 1;
  for (; i < rest.length && rest[i] !== quote; i++) {
    if (quote === '"' && rest[i] === '\\' && i + 1 < rest.length) {
      const next = rest[++i];
      value += ESCAPES[next] ?? `\\${next}`;
    } else value += rest[i];
  }
  if (i >= rest.length) throw lineError(path, line, `unterminated ${quote} quote (a quoted value must end on the same line; write a line break as \\n inside double quotes)`);
  const after = rest.slice(i + 1).trim();
  if (after !== '' && !after.startsWith('#')) throw lineError(path, line, `unexpected ${JSON.stringify(shorten(after))} after the closing quote`);
  return value;
}

function lineError(path: string, line: number, message: string): NotifyError {
  return new NotifyError('CONFIG_FILE', `${path}:${line}: ${message}`, { path, line });
}

/** long lines (a key pasted by mistake) are cut in messages: enough to find the line, not the secret */
function shorten(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}
