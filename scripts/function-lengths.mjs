#!/usr/bin/env node
// Files over 200 lines and functions over 60 lines below a folder (default src/), measured with the
// TypeScript compiler's own parser so the figures in a review note can be reproduced by anyone.
// Usage: node scripts/function-lengths.mjs [src] [--function-lines 60] [--file-lines 200]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const tsFiles = (root) => {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) files.push(path);
    }
  };
  walk(root);
  return files.sort();
};

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node);

const functionName = (node) => {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '(anonymous)';
};

// Every function (nested ones too) longer than `maxLines`, as { file, line, name, lines }.
export const measure = (root, { fileLines = 200, functionLines = 60 } = {}) => {
  const longFiles = [];
  const longFunctions = [];
  for (const path of tsFiles(root)) {
    const text = readFileSync(path, 'utf8');
    const file = relative(root, path);
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > fileLines) longFiles.push({ file, lines });
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (isFunction(node)) {
        const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const length = end - start + 1;
        if (length > functionLines) longFunctions.push({ file, line: start + 1, name: functionName(node), lines: length });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  longFiles.sort((a, b) => b.lines - a.lines);
  longFunctions.sort((a, b) => b.lines - a.lines);
  return { longFiles, longFunctions };
};

export const printLengths = ({ longFiles, longFunctions }, { fileLines = 200, functionLines = 60 } = {}) => {
  console.log(`files over ${fileLines} lines (${longFiles.length}):`);
  for (const f of longFiles) console.log(`  ${f.lines}\t${f.file}`);
  console.log(`functions over ${functionLines} lines (${longFunctions.length}):`);
  for (const f of longFunctions) console.log(`  ${f.lines}\t${f.name}\t${f.file}:${f.line}`);
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    const value = Number(args[i + 1]);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a whole number above 0`);
    args.splice(i, 2);
    return value;
  };
  try {
    const limits = { functionLines: option('--function-lines', 60), fileLines: option('--file-lines', 200) };
    const root = resolve(args[0] ?? 'src');
    if (!existsSync(root) || !statSync(root).isDirectory()) throw new Error(`${root} is not a folder`);
    printLengths(measure(root, limits), limits);
  } catch (error) {
    console.error(`function-lengths: ${error.message}`);
    process.exitCode = 2;
  }
}
