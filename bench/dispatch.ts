import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNotify } from '../src/notify.ts';
import { benchEmailHtml } from './lib/email.ts';
import { FROM, rawMimeRate, recipients, sendMailHtmlRate } from './lib/nodemailer-baseline.ts';
import { info, report } from './lib/report.ts';
import { type SinkStats, startRemoteSink } from './lib/sink.ts';

/**
 * Campaign dispatch to a loopback SMTP sink (its own process) against two nodemailer baselines
 * sending to the same sink with the same pooled transport settings:
 *   notify.campaigns.send  vs  raw nodemailer pool sending pre-built raw MIME    goal >= 0.8
 *   notify.campaigns.send  vs  plain sendMail({ html }) per recipient            goal >= 1.5
 * The email is the 20 KB / 30-link one; notify renders, tracks and records every send.
 */
const RAW = 4000;
const HTML = 1500;
const CAMPAIGN = Number(process.env.BENCH_DISPATCH_RECIPIENTS ?? 4000);
const WARM = 300;

const html = benchEmailHtml();
const sink = await startRemoteSink();
try {
  const raw = await rawMimeRate(sink.url, html, RAW);
  await sink.reset();
  info('baseline raw nodemailer pool, pre-built MIME', `${fmt(raw)} msg/s`);
  const plain = await sendMailHtmlRate(sink.url, html, HTML);
  await sink.reset();
  info('baseline nodemailer sendMail({html})', `${fmt(plain)} msg/s`);
  const { rate, stats } = await campaignRate();
  const note = `${fmt(stats.messages)} messages, ${stats.duplicates} duplicates in the sink; rendered, tracked and recorded on SQLite`;
  report({ name: 'campaign dispatch', figure: rate, unit: 'msg/s', baselineName: 'raw nodemailer, pre-built MIME', baseline: raw, kind: 'rate', goal: { on: 'ratio', min: 0.8 }, note });
  report({ name: 'campaign dispatch vs sendMail({html})', figure: rate, unit: 'msg/s', baselineName: 'sendMail({html})', baseline: plain, kind: 'rate', goal: { on: 'ratio', min: 1.5 } });
} finally {
  await sink.stop();
}

/**
 * One notify:send-campaign run over CAMPAIGN contacts (batchSize = all of them), timed from the
 * call to the last message in the sink: claim rows, render, track, deliver, record outcomes.
 */
async function campaignRate(): Promise<{ rate: number; stats: SinkStats }> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-bench-dispatch-'));
  const database = `sqlite:${join(dir, 'notify.db')}`;
  const notify = await createNotify({ database, configFile: false, env: {}, logLevel: 'silent', mailer: sink.url, fromEmail: FROM, baseUrl: 'https://news.example.com', batchSize: CAMPAIGN });
  try {
    const upsertAll = async (emails: string[], list: string) => {
      for (let i = 0; i < emails.length; i += 50) await Promise.all(emails.slice(i, i + 50).map((email, j) => notify.contacts.upsert({ email, name: `Reader ${i + j}`, lists: [list] })));
    };
    await upsertAll(recipients(CAMPAIGN, 'notify'), 'bench');
    await upsertAll(recipients(WARM, 'warm'), 'warm');
    const campaign = await notify.campaigns.create({ subject: 'This week', html, list: 'bench' });
    // warm-up: compile path, JIT, the pool's connections (a campaign of its own, not counted)
    const warm = await notify.campaigns.create({ subject: 'Warm-up', html, list: 'warm' });
    await notify.campaigns.send(warm.id);
    await sink.waitFor(WARM);
    await sink.reset();
    const start = process.hrtime.bigint();
    const result = await notify.campaigns.send(campaign.id);
    const stats = await sink.waitFor(result.sent);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (result.sent !== CAMPAIGN || result.failed !== 0) throw new Error(`campaign run sent ${result.sent}, failed ${result.failed} of ${CAMPAIGN}`);
    return { rate: CAMPAIGN / seconds, stats };
  } finally {
    await notify.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
