import { isNotifyError } from '../src/errors.ts';
import { benchEmailHtml } from './lib/email.ts';
import { rawMimeRate, sendMailHtmlRate } from './lib/nodemailer-baseline.ts';
import { info, skip } from './lib/report.ts';
import { startRemoteSink } from './lib/sink.ts';

/**
 * Campaign dispatch to a loopback SMTP sink (its own process) against two nodemailer baselines
 * sending to the same sink with the same pooled transport settings:
 *   notify.campaigns.send  vs  raw nodemailer pool sending pre-built raw MIME    goal >= 0.8
 *   notify.campaigns.send  vs  plain sendMail({ html }) per recipient            goal >= 1.5
 * The email is the 20 KB / 30-link one; notify renders, tracks and records every send.
 */
const RAW = 4000;
const HTML = 1500;

const html = benchEmailHtml();
const sink = await startRemoteSink();
try {
  const raw = await rawMimeRate(sink.url, html, RAW);
  await sink.reset();
  info('baseline raw nodemailer pool, pre-built MIME', `${Math.round(raw).toLocaleString('en-US')} msg/s`);
  const plain = await sendMailHtmlRate(sink.url, html, HTML);
  await sink.reset();
  info('baseline nodemailer sendMail({html})', `${Math.round(plain).toLocaleString('en-US')} msg/s`);
  try {
    await campaignRate();
  } catch (err) {
    if (!isNotifyError(err, 'NOT_IMPLEMENTED')) throw err;
    skip('campaign dispatch', `${err.message}`);
  }
} finally {
  await sink.stop();
}

async function campaignRate(): Promise<number> {
  const { createNotify } = await import('../src/notify.ts');
  const notify = await createNotify({ database: 'sqlite::memory:', configFile: false, env: {}, logLevel: 'silent', mailer: sink.url, fromEmail: 'news@example.com' });
  try {
    await notify.campaigns.create({ subject: 'This week', html });
    return 0;
  } finally {
    await notify.close();
  }
}
