// Where scripts/mutation-bundle.mjs puts a test file's bundle; scripts/mutation-run-bundle.mjs reads it there.
export const BUNDLE_DIR = '.mutation-bundles';

/** `test/http/open.test.ts` -> `.mutation-bundles/test/http/open.test.mjs` */
export function bundleFor(testFile) {
  return `${BUNDLE_DIR}/${testFile.replace(/^\.\//, '').replace(/\.ts$/, '.mjs')}`;
}
