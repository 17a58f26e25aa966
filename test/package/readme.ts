import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** A fenced code block of the README: the first one of `lang` after `heading` that contains `marker`. */
export function readmeBlock(heading: string, lang: string, marker: string): string {
  const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const blocks = [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]);
  const block = blocks.find((b) => b.includes(marker));
  assert.ok(block, `README: a ${lang} block under ${heading} with ${marker}`);
  return block;
}
