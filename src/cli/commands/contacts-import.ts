import type { Command } from 'commander';

export interface ContactsImportOptions {
  list?: string[];
  status?: string;
  encoding: string;
}

export function registerContactsImport(program: Command): void {
  program
    .command('contacts:import <csv>')
    .description('import contacts from CSV (a Mailchimp audience export as it comes, or email,name,...; other columns become attributes)')
    .option('-l, --list <name...>', 'add every imported contact to these lists')
    .option('-s, --status <status>', 'status of rows without a status column (default: detected; Mailchimp unsubscribed/cleaned files by their columns)')
    .option('--encoding <encoding>', 'utf-8 (default) or latin1 (Windows-1252 spreadsheets)', 'utf-8')
    .action(async (file: string, opts: ContactsImportOptions, cmd: Command) => (await import('./contacts-import-run.ts')).runContactsImport(file, opts, cmd));
}
