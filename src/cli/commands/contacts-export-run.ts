import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { exportContactsCsv } from '../../core/export.ts';
import { withNotify } from '../open.ts';
import type { ContactsExportOptions } from './contacts-export.ts';

/** `notify contacts:export`: the contacts as CSV, to standard output or --out. */
export async function runContactsExport(opts: ContactsExportOptions, cmd: Command): Promise<void> {
  await withNotify(
    cmd,
    async (notify) => {
      let rows = 0;
      const lines = exportContactsCsv(notify.context, { list: opts.list, status: opts.status });
      // the first line is awaited before the file is opened, so a bad --list or --status leaves no empty file
      const first = await lines.next();
      async function* counted() {
        if (!first.done) yield first.value;
        for await (const line of lines) {
          rows++;
          yield line;
        }
      }
      if (opts.out) {
        await pipeline(Readable.from(counted()), createWriteStream(opts.out));
        console.error(`exported ${rows} contacts to ${opts.out}`);
      } else await pipeline(Readable.from(counted()), process.stdout, { end: false });
    },
    { readOnly: true },
  );
}
