import { serveCommands, ready } from '../lib/child.ts';
import { benchEmailHtml } from '../lib/email.ts';
import { notifyBytesRate, pooledTransport, rawMimeRate, sendMailHtmlRate } from '../lib/nodemailer-baseline.ts';

/**
 * The dispatch baselines in a process of their own (pinned like the campaign worker it is compared
 * with), keeping its pooled connections open across rounds. Commands: { do: 'raw' | 'same' | 'html', n }
 * -> { rate } in messages per second. Usage: nodemailer-worker.ts <smtp url>
 */
const transport = pooledTransport(process.argv[2]);
const html = benchEmailHtml();
const baselines = { raw: rawMimeRate, same: notifyBytesRate, html: sendMailHtmlRate };
serveCommands(
  async (cmd) => ({ rate: await baselines[cmd.do as keyof typeof baselines](transport, html, Number(cmd.n)) }),
  async () => transport.close(),
);
ready({ pid: process.pid });
