// notify:send-campaign from the command line, in a process of its own: the progress lines it prints off a
// terminal, its summary and its exit codes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createNotify } from '../../src/notify.ts';
import { cliEntry } from '../helpers/compiled-entry.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

test('CLI notify:send-campaign: plain progress lines off a terminal, a summary, exit code 1 on a fatal error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-cli-'));
  const sink = await startSmtpSink({ parse: false });
  const config = join(dir, 'notify.config.json');
  writeFileSync(config, JSON.stringify({ database: `sqlite:${join(dir, 'n.db')}`, mailer: sink.url, fromEmail: 'news@example.com', batchSize: 3, logLevel: 'silent' }));
  const notify = await createNotify({ configFile: config, env: {} });
  for (let i = 0; i < 5; i++) await notify.contacts.upsert({ email: `cli${i}@example.com`, lists: ['cli'] });
  const c = await notify.campaigns.create({ subject: 'CLI', html: '<p>x</p>', list: 'cli' });
  await notify.close();
  // async: the SMTP sink lives in this process and must keep answering while the CLI runs
  const run = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((done) => {
      execFile(process.execPath, [cliEntry(), '--config', config, ...args], { encoding: 'utf8', env: { ...process.env, NOTIFY_LOG_LEVEL: 'silent' }, timeout: 60_000 }, (err, stdout, stderr) =>
        done({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  try {
    const first = await run('notify:send-campaign', String(c.id));
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /campaign \d+: 3\/3 \(sent 3, failed 0, suppressed 0\)/);
    assert.match(first.stdout, /sent 3, failed 0, suppressed 0, 2 remaining \(run again to continue\)/);
    const second = await run('notify:send-campaign', String(c.id));
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /campaign sent, nothing remains/);
    await sink.waitFor(5);
    for (const [args, pattern] of [
      [['notify:send-campaign', '999'], /Campaign 999 not found \[NOT_FOUND\]/],
      [['notify:send-campaign', 'abc'], /must be a number/],
    ] as const) {
      const bad = await run(...args);
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, pattern);
    }
  } finally {
    await sink.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
