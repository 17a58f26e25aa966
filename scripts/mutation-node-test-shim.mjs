// What the in-process mutation runner (scripts/mutation-fast.mjs) bundles in place of `node:test`: the part of
// its API the suite uses (test/it, describe/suite, before/after/beforeEach/afterEach, t.after, t.diagnostic,
// skip/todo/only), recording the tree instead of running it, so that one process can load and run the same
// test file once per mutant. Test order and hook order follow node:test: sequential, hooks outer first.
import { mock } from 'node:test';

export { mock };

function collector() {
  const c = globalThis.__mutationCollector;
  if (!c) throw new Error('mutation-node-test-shim: no collector (load the bundle through scripts/mutation-fast-worker.mjs)');
  return c;
}

/** node:test's overloads: (name?, options?, fn?) in that order, each optional. */
function args(a, b, c) {
  const list = [a, b, c];
  const name = typeof list[0] === 'string' ? list.shift() : typeof list[0] === 'function' ? list[0].name || '<anonymous>' : '<anonymous>';
  const options = list[0] && typeof list[0] === 'object' ? list.shift() : {};
  const fn = typeof list[0] === 'function' ? list[0] : undefined;
  return { name, options: options ?? {}, fn };
}

const skipped = (options) => Boolean(options.skip || options.todo) || undefined;

function addTest(extra, a, b, c) {
  const { name, options, fn } = args(a, b, c);
  collector().current.children.push({ kind: 'test', name, fn, skip: skipped({ ...options, ...extra }) || !fn, timeout: options.timeout });
}

function addSuite(extra, a, b, c) {
  const { name, options, fn } = args(a, b, c);
  const col = collector();
  const suite = newSuite(name, skipped({ ...options, ...extra }));
  col.current.children.push(suite);
  const parent = col.current;
  col.current = suite;
  try {
    fn?.();
  } finally {
    col.current = parent;
  }
}

export function newSuite(name, skip) {
  return { kind: 'suite', name, skip, children: [], before: [], after: [], beforeEach: [], afterEach: [] };
}

export const test = (a, b, c) => addTest({}, a, b, c);
test.skip = (a, b, c) => addTest({ skip: true }, a, b, c);
test.todo = (a, b, c) => addTest({ todo: true }, a, b, c);
test.only = (a, b, c) => addTest({}, a, b, c);
export const it = test;
export const describe = (a, b, c) => addSuite({}, a, b, c);
describe.skip = (a, b, c) => addSuite({ skip: true }, a, b, c);
describe.todo = (a, b, c) => addSuite({ todo: true }, a, b, c);
describe.only = (a, b, c) => addSuite({}, a, b, c);
export const suite = describe;

const hook = (kind) => (fn) => {
  collector().current[kind].push(fn);
};
export const before = hook('before');
export const after = hook('after');
export const beforeEach = hook('beforeEach');
export const afterEach = hook('afterEach');
// node:test also hangs these on `test` (test/campaigns/lifecycle.test.ts calls test.after)
Object.assign(test, { before, after, beforeEach, afterEach, describe, it: test, suite: describe });

export default test;
