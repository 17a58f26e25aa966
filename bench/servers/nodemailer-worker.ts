import { serveCommands, ready } from '../lib/child.ts';
import { benchEmailHtml } from '../lib/email.ts';
import { pooledTransport, rawMimeRate, sendMailHtmlRate } from '../lib/nodemailer-baseline.ts';

/**
 * The dispatch baselines in a process of their own (pinned like the campaign worker it is compared
 * with), keeping its pooled connections open across rounds. Commands: { do: 'raw' | 'html', n }
 * -> { rate } in messages per second. Usage: nodemailer-worker.ts <smtp url>
 */
const transport = pooledTransport(process.argv[2]);
const html = benchEmailHtml();
serveCommands(
  async (cmd) => ({ rate: await (cmd.do === 'raw' ? rawMimeRate : sendMailHtmlRate)(transport, html, Number(cmd.n)) }),
  async () => transport.close(),
);
ready({ pid: process.pid });
