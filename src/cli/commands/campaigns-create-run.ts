import type { Command } from 'commander';
import { whereToSet } from '../../config.ts';
import type { CampaignInput } from '../../core/campaigns.ts';
import { withNotify } from '../open.ts';

export interface Options {
  subject?: string;
  html?: string;
  markdown?: string;
  markdownFile?: string;
  text?: string;
  layout?: string;
  list?: string;
  segment?: string;
  fromName?: string;
  fromEmail?: string;
  name?: string;
  trackOpens?: boolean;
  trackClicks?: boolean;
  json?: boolean;
}

/**
 * `notify campaigns:create --subject ... --markdown-file news.md --list news`: stores a campaign
 * (draft) and prints its id, for `notify notify:send-campaign <id>`. Everything campaigns.create()
 * checks (one body, Liquid syntax, the markdown file under markdownPath, header injection) is
 * checked now, so a broken campaign fails here rather than at the first send.
 */
export async function runCampaignsCreate(opts: Options, cmd: Command): Promise<void> {
  const input: CampaignInput = {
    subject: opts.subject ?? '',
    html: opts.html,
    markdown: opts.markdown,
    markdownFile: opts.markdownFile,
    text: opts.text,
    layout: opts.layout,
    list: opts.list,
    segment: opts.segment,
    fromName: opts.fromName,
    fromEmail: opts.fromEmail,
    name: opts.name,
    trackOpens: opts.trackOpens,
    trackClicks: opts.trackClicks,
  };
  await withNotify(cmd, async (notify) => {
    const campaign = await notify.campaigns.create(input);
    if (opts.json) console.log(JSON.stringify(campaign, null, 2));
    else {
      console.log(String(campaign.id));
      if (!campaign.from_email && !notify.config.fromEmail.trim()) console.error(`warning: no sender address; sending will fail until --from-email is given here or the fromEmail option is set (${whereToSet('fromEmail')})`);
      console.error(`created campaign ${campaign.id} (${campaign.list ? `list ${campaign.list}` : 'every contact'}${campaign.segment ? ', narrowed by its segment' : ''}); send it with: notify notify:send-campaign ${campaign.id} --all`);
    }
  });
}
