// Starts the CommonJS bundle beside it (<name>.bundle.cjs, from test/helpers/compiled-entry.ts) with
// V8's code cache: node 20 compiles the 8 MB bundle of a `notify` process anew at every start (about
// 0.3 s of CPU; node 22's module.enableCompileCache is not there), and the suite starts hundreds of
// them. The first process writes the cache when it exits; the others compile from it.
'use strict';
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const { dirname } = require('node:path');
const Module = require('node:module');
const vm = require('node:vm');

const file = __filename.replace(/\.cjs$/, '.bundle.cjs');
const cacheFile = `${file}.v8cache`;
let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  // none yet: this process writes it
}
// the bundle's own import() calls come here: node 20 loses a script's dynamic-import callback when
// the script is compiled from cached data (the bundle's `await import(` were renamed at build)
const wrapper = `(function (exports, require, module, __filename, __dirname, __notifyImport) {${readFileSync(file, 'utf8')}\n})`;
const script = new vm.Script(wrapper, { filename: file, cachedData });
if (cachedData === undefined || script.cachedDataRejected) {
  // at exit, so the functions the run compiled are in it; before the bundle runs, which may exit at once
  process.once('exit', () => {
    try {
      const tmp = `${cacheFile}.${process.pid}`;
      writeFileSync(tmp, script.createCachedData());
      renameSync(tmp, cacheFile);
    } catch {
      // a cache is only a speed-up
    }
  });
}
const bundle = new Module(file, module);
bundle.filename = file;
bundle.paths = Module._nodeModulePaths(dirname(file));
script.runInThisContext().call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, dirname(file), (specifier) => import(specifier));
