import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { assertDecodable, type CsvEncoding } from '../../core/csv.ts';
import { type ImportOptions, importContacts } from '../../core/import.ts';
import { parseStatus } from '../../core/import-columns.ts';
import { NotifyError } from '../../errors.ts';
import { withNotify } from '../open.ts';
import type { ContactsImportOptions } from './contacts-import.ts';

const SHOWN_REJECTIONS = 50;
const PLAIN_EVERY = 10_000;

/** `notify contacts:import <csv>`: checks the file's encoding, then imports it with a progress report. */
export async function runContactsImport(file: string, opts: ContactsImportOptions, cmd: Command): Promise<void> {
  if (!existsSync(file)) throw new NotifyError('NOT_FOUND', `No file ${file}`, { path: file });
  const encoding = parseEncoding(opts.encoding);
  const status = opts.status === undefined ? undefined : parseStatus(opts.status);
  // The whole file is checked as text first, so a wrong encoding stops the import before any row is stored.
  await assertDecodable(createReadStream(file), encoding);
  const size = (await stat(file)).size;
  await withNotify(cmd, async (notify) => {
    const { contacts } = notify.services;
    const progress = reporter(size);
    const result = await importContacts(contacts, progress.count(createReadStream(file)), { lists: opts.list, status, encoding, onProgress: progress.update });
    progress.stop();
    for (const r of result.rejected.slice(0, SHOWN_REJECTIONS)) console.error(`line ${r.line}: ${r.reason}`);
    if (result.rejected.length > SHOWN_REJECTIONS) console.error(`... and ${result.rejected.length - SHOWN_REJECTIONS} more rejected rows`);
    console.log(`created ${result.created}, updated ${result.updated}, unchanged ${result.unchanged}, rejected ${result.rejected.length}`);
    if (result.imported === 0 && result.rejected.length > 0) process.exitCode = 1;
  });
}

function parseEncoding(value: string): CsvEncoding {
  const v = value.toLowerCase();
  if (v === 'utf-8' || v === 'utf8') return 'utf-8';
  if (v === 'latin1' || v === 'latin-1' || v === 'iso-8859-1' || v === 'windows-1252') return 'latin1';
  throw new NotifyError('INVALID_INPUT', `Unknown encoding "${value}" (utf-8 or latin1)`, { field: 'encoding' });
}

type Progress = Parameters<NonNullable<ImportOptions['onProgress']>>[0];

/** A bar over the file's bytes on a terminal; a plain line every PLAIN_EVERY rows in a log or pipe. */
function reporter(size: number) {
  let read = 0;
  const bar = process.stderr.isTTY ? new SingleBar({ format: 'importing [{bar}] {percentage}% | {rows} rows | {created} created {updated} updated {unchanged} unchanged {rejected} rejected', stream: process.stderr }) : undefined;
  bar?.start(size, 0, { rows: 0, created: 0, updated: 0, unchanged: 0, rejected: 0 });
  return {
    async *count(source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        read += chunk.length;
        yield chunk;
      }
    },
    update(p: Progress) {
      if (bar) bar.update(read, p);
      else if (p.rows % PLAIN_EVERY === 0) console.log(`${p.rows} rows: created ${p.created}, updated ${p.updated}, unchanged ${p.unchanged}, rejected ${p.rejected}`);
    },
    stop() {
      bar?.update(size);
      bar?.stop();
    },
  };
}
