import type { Command } from 'commander';
import type { CampaignReport } from '../../core/stats.ts';
import { withNotify } from '../open.ts';

/** `notify stats <campaignId>`: the campaign's report, as a table or JSON. */
export async function runStats(campaignId: string, opts: { json?: boolean }, cmd: Command): Promise<void> {
  await withNotify(cmd, async (notify) => {
    const report = await notify.campaigns.getCampaignReport(campaignId as unknown as number);
    console.log(opts.json ? JSON.stringify(report, null, 2) : formatReport(report));
  }, { readOnly: true });
}

const pct = (n: number, of: number) => (of > 0 ? `${((n / of) * 100).toFixed(1)}%` : '–');
const num = (n: number) => n.toLocaleString('en');

export function formatReport(r: CampaignReport): string {
  const { total, sent, failed, opened, clicked } = r.stats;
  const rows: [string, number, string][] = [
    ['total', total, 'send records'],
    ['sent', sent, pct(sent, total)],
    ['failed', failed, ''],
    ['suppressed', r.suppressed, r.suppressed ? 'not sent: the contact had unsubscribed, bounced or complained' : ''],
    ['opened', opened, `${pct(opened, sent)} of sent; human ${num(r.human.opened)} (${pct(r.human.opened, sent)})`],
    ['clicked', clicked, `${pct(clicked, sent)} of sent; human ${num(r.human.clicked)} (${pct(r.human.clicked, sent)})`],
    ['bounced', r.bounced, ''],
    ['complained', r.complained, ''],
    ['unsubscribed', r.unsubscribed, ''],
  ];
  const width = Math.max(...rows.map(([, n]) => num(n).length));
  const out = [`Campaign ${r.id}: ${r.name || r.subject} (${r.status})`];
  for (const [label, n, note] of rows) out.push(`  ${label.padEnd(13)}${num(n).padStart(width)}  ${note}`.trimEnd());
  out.push('', 'Opened and clicked count every send with at least one open or click, as the spec defines them;');
  out.push('human leaves out events labelled machine (privacy proxies, link scanners).');
  if (r.machine.length) out.push('', 'Machine-labelled events:', ...r.machine.map((m) => `  ${m.type.padEnd(6)} ${m.reason.padEnd(28)} ${num(m.events)}`));
  if (r.links.length) {
    out.push('', 'Clicks per link (clicks / unique / human):');
    for (const l of r.links) out.push(`  #${l.index} ${l.url ?? '(unknown link)'}  ${num(l.clicks)} / ${num(l.unique)} / ${num(l.human)}`);
  }
  const active = r.timeline.buckets.filter((b) => b.opens + b.clicks > 0);
  if (active.length) {
    out.push('', `Opens and clicks per ${Math.round(r.timeline.bucketMs / 60_000)} min (UTC; human in brackets):`);
    for (const b of active) {
      out.push(`  ${b.start.toISOString().slice(0, 16).replace('T', ' ')}  opens ${num(b.opens)} (${num(b.humanOpens)})  clicks ${num(b.clicks)} (${num(b.humanClicks)})`);
    }
  }
  return out.join('\n');
}
