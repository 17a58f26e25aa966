import type { Command } from 'commander';
import type { Options } from './campaigns-create-run.ts';

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
    .action(async (opts: Options, cmd: Command) => (await import('./campaigns-create-run.ts')).runCampaignsCreate(opts, cmd));
}
