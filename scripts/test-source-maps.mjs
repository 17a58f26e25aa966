// Source maps of the test build that name the project's own lines only. node --enable-source-maps
// decodes every map of every module a process loads, mapping by mapping, before the first test runs;
// with the packages bundled in (test-bundle.mjs), most mappings point into node_modules, and decoding
// them cost a test file about 0.3 s of CPU (a core file: 1.04 s with full maps against 0.70 s with
// none, loaded machine). A failure is read in the project's files; a frame inside a package keeps its
// place in the built file.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGITS = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64.length; i++) DIGITS[BASE64.charCodeAt(i)] = i;

/** The fields of one mapping (source map v3's base64 VLQ), each a delta to the one before. */
export function decodeSegment(text) {
  const values = [];
  let value = 0;
  let shift = 0;
  for (const c of text) {
    const digit = DIGITS[c.charCodeAt(0)] ?? -1;
    if (digit < 0) throw new Error(`not a source map digit: ${JSON.stringify(c)}`);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
    } else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return values;
}

export function encodeSegment(values) {
  let out = '';
  for (const v of values) {
    let rest = v < 0 ? (-v << 1) | 1 : v << 1;
    do {
      const digit = rest & 31;
      rest >>>= 5;
      out += BASE64[rest > 0 ? digit | 32 : digit];
    } while (rest > 0);
  }
  return out;
}

/**
 * `mappings` without the mappings into sources `drop(index)` names. Where such a run starts after a
 * kept mapping on the same generated line, a mapping to no source ends the kept one, so that the
 * package's code is not reported at the line before it. One pass over the characters: a build's maps
 * hold millions of mappings.
 */
export function keepMappings(mappings, drop) {
  const state = [0, 0, 0, 0]; // absolute source, line, column, name across the whole map
  const written = [0, 0, 0, 0];
  const d = [0, 0, 0, 0, 0];
  let out = '';
  let column = 0;
  let writtenColumn = 0;
  let inKept = false;
  let lineHasOutput = false;
  let pos = 0;
  while (pos <= mappings.length) {
    const c = mappings.charCodeAt(pos);
    if (c === 59 /* ; */ || Number.isNaN(c)) {
      if (!Number.isNaN(c)) out += ';';
      column = 0;
      writtenColumn = 0;
      inKept = false;
      lineHasOutput = false;
      pos++;
      continue;
    }
    if (c === 44 /* , */) {
      pos++;
      continue;
    }
    let n = 0;
    let value = 0;
    let shift = 0;
    while (pos < mappings.length) {
      const ch = mappings.charCodeAt(pos);
      if (ch === 44 || ch === 59) break;
      const digit = DIGITS[ch];
      if (digit === undefined || digit < 0) throw new Error(`not a source map digit: ${JSON.stringify(mappings[pos])}`);
      value += (digit & 31) * 2 ** shift;
      pos++;
      if (digit & 32) {
        shift += 5;
      } else {
        d[n++] = value % 2 ? -(value - 1) / 2 : value / 2;
        value = 0;
        shift = 0;
      }
    }
    column += d[0];
    for (let i = 1; i < n; i++) state[i - 1] += d[i];
    const dropped = n > 1 && drop(state[0]);
    if (dropped && !inKept) continue;
    const fields = [column - writtenColumn];
    writtenColumn = column;
    if (!dropped && n > 1) {
      for (let i = 0; i < n - 1; i++) {
        fields.push(state[i] - written[i]);
        written[i] = state[i];
      }
    }
    out += (lineHasOutput ? ',' : '') + encodeSegment(fields);
    lineHasOutput = true;
    inKept = !dropped && n > 1;
  }
  return out;
}

/** Rewrites every .map file under `dir` (the runner's build folder) to the sources outside node_modules. */
export function trimSourceMaps(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.map')) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const map = JSON.parse(readFileSync(path, 'utf8'));
    const inPackage = map.sources.map((s) => s.includes('node_modules/'));
    if (!inPackage.includes(true)) continue;
    map.mappings = keepMappings(map.mappings, (i) => inPackage[i]);
    if (map.sourcesContent) map.sourcesContent = map.sourcesContent.map((c, i) => (inPackage[i] ? null : c));
    writeFileSync(path, JSON.stringify(map));
  }
}
