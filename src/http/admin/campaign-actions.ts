import type { Context as HonoContext, Hono } from 'hono';
import type { Context } from '../../context.ts';
import type { CampaignsService } from '../../core/campaigns.ts';
import { isNotifyError } from '../../errors.ts';
import type { Views } from '../../render/views.ts';
import { csrfOk } from './csrf.ts';
import { adminPage } from './render.ts';

interface Parts {
  ctx: Context;
  views: Views;
  campaigns: CampaignsService;
  /** the campaign page again, with the refusal shown (status 4xx) */
  showRefusal(c: HonoContext, id: string, message: string, status: number): Promise<Response>;
}

export const ACTIONS = ['schedule', 'pause', 'resume', 'cancel', 'test'] as const;
type Action = (typeof ACTIONS)[number];

/**
 * POST /notify/admin/campaigns/:id/<action>: the campaign page's forms. A missing or wrong form
 * token is 403 and changes nothing; a refused action (INVALID_STATE, a past time) shows the page
 * again with the reason; a done one redirects (303) back to the page.
 */
export function registerCampaignActions(app: Hono, { ctx, views, campaigns, showRefusal }: Parts): void {
  const run: Record<Action, (id: string, form: Record<string, unknown>) => Promise<unknown>> = {
    schedule: (id, f) => campaigns.schedule(Number(id), String(f.sendAt ?? '')),
    pause: (id) => campaigns.pause(Number(id)),
    resume: (id) => campaigns.resume(Number(id)),
    cancel: (id) => campaigns.cancel(Number(id)),
    test: (id, f) => campaigns.sendTest(Number(id), { to: String(f.to ?? '').split(/[\s,;]+/).filter(Boolean) }),
  };
  app.post('/notify/admin/campaigns/:id/:action', async (c) => {
    const { id, action } = c.req.param();
    if (!(ACTIONS as readonly string[]).includes(action) || !/^[0-9]{1,15}$/.test(id)) return c.text('Not found', 404);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    if (!csrfOk(c, ctx.secret, form.csrf)) {
      return adminPage(c, views, 'not_found', { title: 'Refused', message: 'This form is out of date or came from another site. Reload the campaign page and try again.' }, 403);
    }
    try {
      const out = await run[action as Action](id, form);
      const notice = action === 'test' ? `test-${(out as { sent: string[] }).sent.length}` : action;
      return c.redirect(`/notify/admin/campaigns/${id}?done=${notice}`, 303);
    } catch (err) {
      if (!isNotifyError(err)) throw err;
      return showRefusal(c, id, err.message, err.code === 'NOT_FOUND' ? 404 : err.code === 'INVALID_STATE' ? 409 : 422);
    }
  });
}
