#!/usr/bin/env node
// Layering report for src/: files over 200 lines, functions over 60 lines, and which top-level
// folder imports which (an arrow a -> b counts the files of a that import something from b).
// Usage: node scripts/layers.mjs [src]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(process.argv[2] ?? 'src');
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (path.endsWith('.ts')) files.push(path);
  }
};
walk(root);

// the folder a file belongs to: src/core/x.ts -> core; src/notify.ts -> (root)
const area = (path) => {
  const rel = relative(root, path).split('/');
  return rel.length > 1 ? rel[0] : '(root)';
};

const longFiles = [];
const longFunctions = [];
const edges = new Map();
for (const path of files) {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > 200) longFiles.push([relative(root, path), lines]);
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const from = area(path);
  const seen = new Set();
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      if (spec.startsWith('.')) {
        const to = area(resolve(dirname(path), spec));
        if (to !== from && !seen.has(to)) {
          seen.add(to);
          const key = `${from} -> ${to}`;
          edges.set(key, (edges.get(key) ?? 0) + 1);
        }
      }
    }
    if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (end - start + 1 > 60) {
        const name = node.name?.getText() ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText() : ts.isPropertyAssignment(node.parent) ? node.parent.name.getText() : '(anonymous)');
        longFunctions.push([`${relative(root, path)}:${start + 1}`, name, end - start + 1]);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

console.log(`files over 200 lines (${longFiles.length}):`);
for (const [f, n] of longFiles.sort((a, b) => b[1] - a[1])) console.log(`  ${n}\t${f}`);
console.log(`functions over 60 lines (${longFunctions.length}):`);
for (const [f, name, n] of longFunctions.sort((a, b) => b[2] - a[2])) console.log(`  ${n}\t${name}\t${f}`);
console.log('imports between folders (files importing):');
for (const [k, n] of [...edges.entries()].sort()) console.log(`  ${k}\t${n}`);
