import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import { createContactsService } from '../../core/contacts.ts';
import { importContacts } from '../../core/import.ts';
import { withNotify } from '../open.ts';

export function registerContactsImport(program: Command): void {
  program
    .command('contacts:import <csv>')
    .description('import contacts from a CSV file with a header row (email, name, other columns become attributes)')
    .option('-l, --list <name...>', 'add every imported contact to these lists')
    .action(async (file: string, opts: { list?: string[] }, cmd: Command) => {
      await withNotify(cmd, async (notify) => {
        const contacts = createContactsService(notify.context);
        const { imported, rejected } = await importContacts(contacts, createReadStream(file), {
          lists: opts.list,
          onProgress: (n) => {
            if (n % 1000 === 0) console.log(`${n} imported`);
          },
        });
        for (const r of rejected.slice(0, 50)) console.error(`row ${r.line}: ${r.reason}`);
        if (rejected.length > 50) console.error(`... and ${rejected.length - 50} more rejected rows`);
        console.log(`imported ${imported}, rejected ${rejected.length}`);
        if (imported === 0 && rejected.length > 0) process.exitCode = 1;
      });
    });
}
