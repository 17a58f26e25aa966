import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/** What Python's email package (policy.default, a parser notify did not write) reads from one message. */
export interface PythonRead {
  /** the From display name */
  name: string;
  /** each asked header's value as str() gives it (unfolded), lower-case names; '' when absent */
  headers: Record<string, string>;
}

/** Each message read by python3; undefined when the machine has no python3. */
export function pythonRead(raws: Buffer[], names: string[]): PythonRead[] | undefined {
  const script = [
    'import sys, json, base64, email, email.policy',
    'names = json.loads(sys.argv[1])',
    'out = []',
    'for b in json.load(sys.stdin):',
    '    m = email.message_from_bytes(base64.b64decode(b), policy=email.policy.default)',
    "    out.append({'name': m['from'].addresses[0].display_name, 'headers': {n: str(m[n] or '') for n in names}})",
    'print(json.dumps(out))',
  ].join('\n');
  const r = spawnSync('python3', ['-c', script, JSON.stringify(names)], { input: JSON.stringify(raws.map((b) => b.toString('base64'))), encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}
