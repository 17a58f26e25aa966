#!/usr/bin/env node
// Layering report for src/: files over 200 lines, functions over 60 lines (scripts/function-lengths.mjs),
// and which top-level folder imports which (an arrow a -> b counts the files of a that import from b).
// Usage: node scripts/layers.mjs [src]
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { measure, printLengths, tsFiles } from './function-lengths.mjs';

const root = resolve(process.argv[2] ?? 'src');

// the folder a file belongs to: src/core/x.ts -> core; src/notify.ts -> (root)
const area = (path) => {
  const rel = relative(root, path).split('/');
  return rel.length > 1 ? rel[0] : '(root)';
};

const edges = new Map();
for (const path of tsFiles(root)) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const from = area(path);
  const seen = new Set();
  for (const node of source.statements) {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      if (!spec.startsWith('.')) continue;
      const to = area(resolve(dirname(path), spec));
      if (to !== from && !seen.has(to)) {
        seen.add(to);
        const key = `${from} -> ${to}`;
        edges.set(key, (edges.get(key) ?? 0) + 1);
      }
    }
  }
}

printLengths(measure(root));
console.log('imports between folders (files importing):');
for (const [k, n] of [...edges.entries()].sort()) console.log(`  ${k}\t${n}`);
