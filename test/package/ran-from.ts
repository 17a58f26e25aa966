import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The files whose code ran while `notify <args>` did, from a CPU profile of the process (sampled every
 * 100 µs: the hundreds of modules notify evaluates at start all show): the package's own files relative
 * to `root` (`dist/cli/main.js` or `src/cli/main.ts`), and `tsx` when its loader's code ran. Also the
 * command's standard output.
 */
export async function filesRun(bin: string, args: string[], cwd: string, root: string): Promise<{ files: Set<string>; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-prof-'));
  try {
    const { stdout } = await run(process.execPath, ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', dir, bin, ...args], { cwd, env: { PATH: process.env.PATH }, timeout: 120_000 });
    const files = new Set<string>();
    for (const name of readdirSync(dir)) {
      const profile = JSON.parse(readFileSync(join(dir, name), 'utf8')) as { nodes: { callFrame: { url: string } }[] };
      for (const { callFrame } of profile.nodes) {
        if (!callFrame.url.startsWith('file:')) continue;
        const file = fileURLToPath(callFrame.url);
        if (file.includes('/node_modules/tsx/')) files.add('tsx');
        else if (file.startsWith(`${root}/`) && !file.slice(root.length).includes('/node_modules/')) files.add(file.slice(root.length + 1));
      }
    }
    return { files, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
