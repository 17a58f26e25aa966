import type { Context } from '../../context.ts';
import type { ContactsService } from '../../core/contacts.ts';
import { assertDecodable, type CsvEncoding, parseCsvRecords } from '../../core/csv.ts';
import { importContacts } from '../../core/import.ts';
import { planColumns } from '../../core/import-columns.ts';
import { newToken } from '../../core/tokens.ts';
import type { ContactStatus } from '../../core/types.ts';
import { NotifyError } from '../../errors.ts';

export interface ImportJob {
  id: string;
  status: 'running' | 'done' | 'failed';
  created_at: Date;
  finished_at: Date | null;
  /** bytes of the file read so far, and its size: progress = read / size */
  bytes_read: number;
  bytes_total: number;
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  /** the first rejected rows, with the file line and why */
  rejections: { line: number; reason: string }[];
  /** why a failed job stopped */
  error: string | null;
}

export interface ImportJobs {
  /** checks the file (encoding, header) now, then imports it in the background */
  start(csv: Buffer, opts: { lists?: string[]; status?: ContactStatus; encoding?: CsvEncoding }): Promise<ImportJob>;
  get(id: string): ImportJob | undefined;
  /** stops running imports after their current row and waits for them */
  close(): Promise<void>;
}

const KEEP_JOBS = 100;
const SHOWN_REJECTIONS = 100;
const CHUNK = 64 * 1024;

/**
 * CSV imports started over the API, run by the serving process. Jobs live in its memory (the last
 * KEEP_JOBS of them): progress is asked of the process that runs the import, and a restart forgets
 * finished jobs (the contacts they stored stay, and an import run again changes nothing).
 */
const stopped = () => new NotifyError('CLOSED', 'The server stopped during the import; run it again (rows already stored are unchanged the second time)');

export function createImportJobs(ctx: Context, contacts: ContactsService): ImportJobs {
  const jobs = new Map<string, ImportJob>();
  const running = new Set<Promise<void>>();
  let closing = false;

  async function run(job: ImportJob, csv: Buffer, opts: Parameters<ImportJobs['start']>[1]) {
    async function* chunks() {
      for (let at = 0; at < csv.length; at += CHUNK) {
        if (closing) throw stopped();
        job.bytes_read = Math.min(at + CHUNK, csv.length);
        yield csv.subarray(at, at + CHUNK);
      }
    }
    try {
      const result = await importContacts(contacts, chunks(), {
        ...opts,
        onProgress: (p) => {
          Object.assign(job, { rows: p.rows, created: p.created, updated: p.updated, unchanged: p.unchanged, rejected: p.rejected });
          // checked after every committed batch, so a shutdown waits for one batch, not for the whole file
          if (closing) throw stopped();
        },
      });
      Object.assign(job, { status: 'done', created: result.created, updated: result.updated, unchanged: result.unchanged, rejected: result.rejected.length, rejections: result.rejected.slice(0, SHOWN_REJECTIONS) });
    } catch (err) {
      job.status = 'failed';
      job.error = err instanceof NotifyError ? err.message : 'The import failed; see the server log';
      if (!(err instanceof NotifyError)) ctx.log.error({ err }, 'api import failed');
    }
    job.finished_at = new Date(ctx.clock.now());
  }

  return {
    async start(csv, opts) {
      if (closing) throw new NotifyError('CLOSED');
      await assertDecodable([csv], opts.encoding);
      const header = await parseCsvRecords([csv], opts.encoding).next();
      if (header.done) throw new NotifyError('INVALID_INPUT', 'The CSV file is empty (no header row)');
      planColumns(header.value.fields, opts.status);
      const job: ImportJob = { id: newToken(), status: 'running', created_at: new Date(ctx.clock.now()), finished_at: null, bytes_read: 0, bytes_total: csv.length, rows: 0, created: 0, updated: 0, unchanged: 0, rejected: 0, rejections: [], error: null };
      jobs.set(job.id, job);
      for (const [id, old] of jobs) if (jobs.size > KEEP_JOBS && old.status !== 'running') jobs.delete(id);
      const p = run(job, csv, opts).finally(() => running.delete(p));
      running.add(p);
      return { ...job };
    },
    get: (id) => {
      const job = jobs.get(id);
      return job && { ...job };
    },
    async close() {
      closing = true;
      await Promise.all(running);
    },
  };
}
