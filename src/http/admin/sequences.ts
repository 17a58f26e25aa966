import type { Hono } from 'hono';
import type { DripsService } from '../../core/drips.ts';
import type { StatsService } from '../../core/stats.ts';
import type { Views } from '../../render/views.ts';
import { adminPage, fmtDate, notFound } from './render.ts';

interface Parts {
  views: Views;
  stats: StatsService;
  drips: Pick<DripsService, 'getSequence'>;
}

/** GET /notify/admin/sequences (each with its enrollments by status) and /notify/admin/sequences/:id (its steps). */
export function registerSequencePages(app: Hono, { views, stats, drips }: Parts): void {

  app.get('/notify/admin/sequences', async (c) => adminPage(c, views, 'sequences', { title: 'Drip sequences', sequences: await stats.listSequences() }));

  app.get('/notify/admin/sequences/:id', async (c) => {
    const id = c.req.param('id');
    const sequence = /^[0-9]{1,15}$/.test(id) ? await drips.getSequence(Number(id)) : undefined;
    const summary = sequence && (await stats.listSequences()).find((s) => s.id === sequence.id);
    if (!sequence || !summary) return notFound(c, views, 'There is no such sequence.');
    let at = 0;
    const steps = sequence.steps.map((s) => {
      at += s.delay_minutes;
      return { position: s.position + 1, subject: s.subject, delay: minutes(s.delay_minutes), after: minutes(at), format: s.markdown || s.markdown_file ? 'markdown' : s.html ? 'HTML' : 'text' };
    });
    return adminPage(c, views, 'sequence', { title: sequence.name, s: summary, steps, created: fmtDate(sequence.created_at) });
  });
}

/** `90` -> `1 h 30 min` */
function minutes(n: number): string {
  if (n === 0) return 'at once';
  const d = Math.floor(n / 1440);
  const h = Math.floor((n % 1440) / 60);
  const m = n % 60;
  return [d && `${d} d`, h && `${h} h`, m && `${m} min`].filter(Boolean).join(' ');
}
