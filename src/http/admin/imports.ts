import type { Context as HonoContext, Hono } from 'hono';
import type { Context } from '../../context.ts';
import type { ListsService } from '../../core/lists.ts';
import { CONTACT_STATUSES, type ContactStatus } from '../../core/types.ts';
import { isNotifyError } from '../../errors.ts';
import type { Views } from '../../render/views.ts';
import { contactsCsvResponse } from '../api/contacts-csv.ts';
import type { ImportJobs } from '../api/import-jobs.ts';
import { MAX_CSV_BYTES } from '../api/imports.ts';
import { csrfOk, csrfToken } from './csrf.ts';
import { adminPage, fmtDate, notFound } from './render.ts';

interface Parts {
  ctx: Context;
  views: Views;
  /** the API's background import jobs: one implementation, progress read the same way */
  imports: ImportJobs;
  lists: ListsService;
}

const NO_STORE = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

/**
 * GET/POST /notify/admin/import (a CSV upload, imported in the background), GET
 * /notify/admin/imports/:id (its progress; the page's script polls :id.json) and GET
 * /notify/admin/export.csv (the contacts, as `notify contacts:export` writes them).
 */
export function registerImportPages(app: Hono, { ctx, views, imports, lists }: Parts): void {
  const page = async (c: HonoContext, error: string | null, status = 200) =>
    adminPage(c, views, 'import', { title: 'Import and export', error, csrf: csrfToken(c, ctx.secret), lists: (await lists.list()).map((l) => l.name), statuses: CONTACT_STATUSES, maxMb: MAX_CSV_BYTES / 1024 / 1024 }, status);

  app.get('/notify/admin/import', (c) => page(c, null));

  app.post('/notify/admin/import', async (c) => {
    if (Number(c.req.header('content-length') ?? 0) > MAX_CSV_BYTES + 64 * 1024) return page(c, `The file is over ${MAX_CSV_BYTES / 1024 / 1024} MB; use \`notify contacts:import\` for it.`, 413);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    if (!csrfOk(c, ctx.secret, form.csrf)) return adminPage(c, views, 'not_found', { title: 'Refused', message: 'This form is out of date or came from another site. Reload the page and try again.' }, 403);
    const file = form.file;
    if (!(file instanceof File) || file.size === 0) return page(c, 'Choose a CSV file to import.', 422);
    if (file.size > MAX_CSV_BYTES) return page(c, `The file is over ${MAX_CSV_BYTES / 1024 / 1024} MB; use \`notify contacts:import\` for it.`, 413);
    try {
      const list = typeof form.list === 'string' && form.list ? [form.list] : undefined;
      const status = typeof form.status === 'string' && form.status ? (form.status as ContactStatus) : undefined;
      const job = await imports.start(Buffer.from(await file.arrayBuffer()), { lists: list, status });
      return c.redirect(`/notify/admin/imports/${job.id}`, 303);
    } catch (err) {
      if (!isNotifyError(err)) throw err;
      return page(c, err.message, err.code === 'NOT_FOUND' ? 404 : 422);
    }
  });

  app.get('/notify/admin/imports/:id{[A-Za-z0-9_-]{1,64}\\.json}', (c) => {
    const job = imports.get(c.req.param('id').replace(/\.json$/, ''));
    return job ? c.json(job, 200, NO_STORE) : c.json({ error: 'not_found' }, 404, NO_STORE);
  });

  app.get('/notify/admin/imports/:id{[A-Za-z0-9_-]{1,64}}', (c) => {
    const job = imports.get(c.req.param('id'));
    if (!job) return notFound(c, views, 'There is no such import (the server keeps its last 100).');
    const percent = job.bytes_total ? Math.round((job.bytes_read / job.bytes_total) * 100) : 100;
    return adminPage(c, views, 'import_job', { title: 'Import', job, percent, started: fmtDate(job.created_at), finished: fmtDate(job.finished_at) });
  });

  app.get('/notify/admin/export.csv', async (c) => {
    const filter = { list: c.req.query('list') || undefined, status: c.req.query('status') || undefined };
    try {
      return await contactsCsvResponse(ctx, filter, NO_STORE);
    } catch (err) {
      if (!isNotifyError(err)) throw err;
      return adminPage(c, views, 'not_found', { title: 'Cannot export', message: err.message }, err.code === 'NOT_FOUND' ? 404 : 422);
    }
  });
}
