import type { Command } from 'commander';
import { whereToSet } from '../../config.ts';
import type { CampaignInput } from '../../core/campaigns.ts';
import { withNotify } from '../open.ts';

interface Options {
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
export function registerCampaignsCreate(program: Command): void {
  program
    .command('campaigns:create')
    .description('create a campaign from a subject and one body (--html, --markdown or --markdown-file); prints its id')
    .requiredOption('-s, --subject <subject>', 'subject line (Liquid: {{ contact.name }})')
    .option('--html <html>', 'HTML body')
    .option('--markdown <markdown>', 'Markdown body')
    .option('--markdown-file <file>', 'Markdown file, relative to markdownPath (default: this folder)')
    .option('--text <text>', 'plain-text body (alone, or the text part beside --html/--markdown)')
    .option('--layout <view>', 'layout view name (default: the defaultLayout option)')
    .option('-l, --list <name>', 'send to the contacts of this list (default: every contact)')
    .option('--segment <json>', `only the contacts this segment filter matches, as JSON (with --list: both), e.g. '{"attr":"plan","eq":"pro"}'`)
    .option('--from-name <name>', 'sender name (default: the fromName option)')
    .option('--from-email <address>', 'sender address (default: the fromEmail option)')
    .option('-n, --name <name>', 'a name for the admin pages and reports (default: the subject)')
    // neither given: the campaign follows the trackOpens / trackClicks options (stored as null)
    .option('--track-opens', 'add the open pixel (default: the trackOpens option)')
    .option('--no-track-opens', 'no open pixel: opens of this campaign are not counted')
    .option('--track-clicks', 'rewrite links through the click tracker (default: the trackClicks option)')
    .option('--no-track-clicks', 'links go straight to their destination: clicks are not counted')
    .option('--json', 'print the whole campaign record as JSON')
    .action(async (opts: Options, cmd: Command) => {
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
    });
}
