import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { test } from 'node:test';

// npm's own range logic (semver is what npm uses to decide EBADENGINE); untyped, so loaded by require
const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

const root = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(resolve(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

/**
 * `npm ci` on the oldest Node that `engines` accepts must not warn EBADENGINE: a dependency (dev ones
 * included, since `npm ci` installs them) that needs a newer Node means `engines` tells users
 * something untrue. A dev dependency once pulled in cookie@2 (node >=22) under engines >=20.
 */
test('every locked package accepts the oldest Node that package.json engines allows', () => {
  const oldest = semver.minVersion(pkg.engines.node)?.version;
  assert.ok(oldest, `engines.node ${pkg.engines.node} has a lowest version`);
  assert.equal(oldest.split('.')[0], '20', 'Node 20 is the floor (DESIGN.md section 1)');
  const refused = Object.entries(lock.packages)
    .filter(([path]) => path !== '')
    .map(([path, p]) => ({ name: `${path.replace(/^.*node_modules\//, '')}@${p.version}`, range: Array.isArray(p.engines) ? undefined : p.engines?.node }))
    .filter((p) => p.range !== undefined && !semver.satisfies(oldest, p.range))
    .map((p) => `${p.name} requires node ${p.range}`);
  assert.deepEqual(refused, [], `npm ci on node ${oldest} would warn EBADENGINE`);
});
