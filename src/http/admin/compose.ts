import type { Context as HonoContext, Hono } from 'hono';
import type { Context } from '../../context.ts';
import type { CampaignInput, CampaignsService } from '../../core/campaigns.ts';
import type { ListsService } from '../../core/lists.ts';
import { escapeHtml } from '../../render/liquid.ts';
import { isNotifyError } from '../../errors.ts';
import type { Views } from '../../render/views.ts';
import { csrfOk, csrfToken } from './csrf.ts';
import { adminPage, MAIL_HEADERS } from './render.ts';

interface Parts {
  ctx: Context;
  views: Views;
  campaigns: CampaignsService;
  lists: ListsService;
}

type Form = Record<string, string>;

/**
 * The compose page: GET /notify/admin/campaigns/new, POST /notify/admin/campaigns (save as a draft),
 * and the two things it asks while one types: POST /notify/admin/preview (the message as the chosen
 * contact gets it, as a document for the page's sandboxed frame) and POST /notify/admin/audience
 * (how many the list and segment reach now, as JSON). All of them are the campaigns operations the
 * library and the API run; every POST needs the page's form token.
 */
export function registerCompose(app: Hono, { ctx, views, campaigns, lists }: Parts): void {

  const page = async (c: HonoContext, form: Form, error: string | null, status = 200) =>
    adminPage(c, views, 'compose', { title: 'New campaign', f: form, error, csrf: csrfToken(c, ctx.secret), lists: (await lists.list()).map((l) => l.name) }, status);

  // the tracking boxes start as the options say
  const fresh = (): Form => ({ format: 'markdown', tracking: 'shown', ...(ctx.config.trackOpens ? { trackOpens: 'on' } : {}), ...(ctx.config.trackClicks ? { trackClicks: 'on' } : {}) });
  app.get('/notify/admin/campaigns/new', (c) => page(c, fresh(), null));

  app.post('/notify/admin/campaigns', async (c) => {
    const form = await readForm(c);
    if (!csrfOk(c, ctx.secret, form.csrf)) return refused(c, views);
    try {
      const created = await campaigns.create({ ...campaignInput(form), ...trackingInput(form, ctx.config) });
      return c.redirect(`/notify/admin/campaigns/${created.id}?done=created`, 303);
    } catch (err) {
      if (!isNotifyError(err)) throw err;
      return page(c, form, err.message, err.code === 'NOT_FOUND' ? 404 : 422);
    }
  });

  app.post('/notify/admin/preview', async (c) => {
    const form = await readForm(c);
    if (!csrfOk(c, ctx.secret, form.csrf)) return c.body(message('This form is out of date or came from another site. Reload the page.'), 403, MAIL_HEADERS);
    try {
      const p = await campaigns.preview(campaignInput(form), { contact: form.contact || undefined });
      return c.body(p.html ?? message(p.text, true), 200, MAIL_HEADERS);
    } catch (err) {
      if (!isNotifyError(err)) throw err;
      return c.body(message(`Cannot preview: ${err.message}`), 422, MAIL_HEADERS);
    }
  });

  app.post('/notify/admin/audience', async (c) => {
    const form = await readForm(c);
    const headers = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };
    if (!csrfOk(c, ctx.secret, form.csrf)) return c.json({ error: 'This form is out of date or came from another site. Reload the page.' }, 403, headers);
    try {
      return c.json(await campaigns.countAudience({ list: form.list || null, segment: form.segment || null }), 200, headers);
    } catch (err) {
      if (!isNotifyError(err)) throw err;
      return c.json({ error: err.message }, err.code === 'NOT_FOUND' ? 404 : 422, headers);
    }
  });
}

/** The form's text fields (a file or a repeated field is ignored), each at most 2 MB. */
async function readForm(c: HonoContext): Promise<Form> {
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const form: Form = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string' && v.length <= 2 * 1024 * 1024) form[k] = v;
  return form;
}

function campaignInput(f: Form): CampaignInput {
  const body = f.body ?? '';
  return {
    name: f.name || null,
    subject: f.subject ?? '',
    ...(f.format === 'html' ? { html: body } : { markdown: body }),
    list: f.list || null,
    segment: f.segment?.trim() ? f.segment : null,
    fromName: f.fromName || null,
    fromEmail: f.fromEmail || null,
  };
}

/**
 * The two tracking checkboxes. An unchecked box is not sent, so `tracking=shown` tells that the
 * boxes were on the form (a post without it changes nothing). A box left as the option says
 * stores null, so the campaign keeps following the option; a box changed from it is stored.
 */
function trackingInput(f: Form, options: { trackOpens: boolean; trackClicks: boolean }): Pick<CampaignInput, 'trackOpens' | 'trackClicks'> {
  if (f.tracking !== 'shown') return {};
  const choice = (checked: boolean, option: boolean) => (checked === option ? null : checked);
  return { trackOpens: choice(f.trackOpens === 'on', options.trackOpens), trackClicks: choice(f.trackClicks === 'on', options.trackClicks) };
}

/** a plain note (or a text-only message) in the preview frame, escaped */
function message(text: string, pre = false): string {
  const style = 'font:14px/1.5 -apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#3f3f46;margin:16px';
  return `<!doctype html><meta charset="utf-8"><title>Preview</title>${pre ? `<pre style="${style};white-space:pre-wrap">` : `<p style="${style}">`}${escapeHtml(text)}${pre ? '</pre>' : '</p>'}`;
}

function refused(c: HonoContext, views: Views): Promise<Response> {
  return adminPage(c, views, 'not_found', { title: 'Refused', message: 'This form is out of date or came from another site. Reload the page and try again.' }, 403);
}
