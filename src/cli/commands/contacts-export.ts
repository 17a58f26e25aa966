import type { Command } from 'commander';

export interface ContactsExportOptions {
  list?: string;
  status?: string;
  out?: string;
}

export function registerContactsExport(program: Command): void {
  program
    .command('contacts:export')
    .description("write contacts as CSV (email,name,status,lists,created_at,attributes...); cells starting with = + - @ get a leading ' so spreadsheets do not run them")
    .option('-l, --list <name>', 'only members of this list')
    .option('-s, --status <status>', 'only contacts with this status')
    .option('-o, --out <file>', 'write to this file instead of standard output')
    .action(async (opts: ContactsExportOptions, cmd: Command) => (await import('./contacts-export-run.ts')).runContactsExport(opts, cmd));
}
