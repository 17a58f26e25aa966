import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { renderPreview, type RenderedPreview } from '../render/preview.ts';
import { createEngines } from '../render/compile.ts';
import { contactVars } from './dispatch.ts';
import { emailKey } from './email.ts';
import { checkMessage } from './message-input.ts';
import type { CampaignInput } from './campaigns.ts';
import type { Contact } from './types.ts';

export interface PreviewOptions {
  /** the contact (id or email) whose copy to show; none = a copy with an empty `contact` */
  contact?: number | string | null;
}

export interface CampaignPreview extends RenderedPreview {
  /** the contact the copy is personalised for, if one was found */
  contact: { id: number; email: string } | null;
}

/** Shown where the unsubscribe link goes: a preview must not be able to unsubscribe anybody. */
export const PREVIEW_UNSUBSCRIBE_URL = '#unsubscribe-link-of-the-recipient';

/**
 * A campaign, saved or not, as one of its recipients would get it: the delivery's own render steps
 * (see render/preview.ts), personalised for the chosen contact, with no tracking in it. Nothing is
 * stored and nothing is sent.
 */
export async function previewCampaign(ctx: Context, input: CampaignInput, opts: PreviewOptions = {}): Promise<CampaignPreview> {
  if (typeof input !== 'object' || input === null) throw new NotifyError('INVALID_INPUT', 'campaigns.preview() needs the campaign fields');
  const { subject, layout } = checkMessage(ctx, input);
  const contact = await findContact(ctx, opts.contact);
  const { config } = ctx;
  const tpl = {
    subject,
    html: input.html,
    markdown: input.markdown,
    markdownFile: input.markdownFile,
    text: input.text,
    layout,
    data: { ...(input.data ?? {}), campaign: { id: 0, name: input.name ?? '', subject } },
  };
  const env = { markdownPath: config.markdownPath, viewsPath: config.viewsPath, defaultLayout: config.defaultLayout, engines: createEngines() };
  const vars = contact ? contactVars(contact) : undefined;
  const rendered = await renderPreview(env, tpl, vars, PREVIEW_UNSUBSCRIBE_URL);
  return { ...rendered, contact: contact ? { id: contact.id, email: contact.email } : null };
}

async function findContact(ctx: Context, ref: PreviewOptions['contact']): Promise<Contact | undefined> {
  if (ref === undefined || ref === null || ref === '') return undefined;
  const found =
    typeof ref === 'number' || /^[0-9]{1,15}$/.test(String(ref))
      ? await ctx.store.contacts.getById(Number(ref))
      : typeof ref === 'string' && ref.length <= 254
        ? await ctx.store.contacts.getByEmailKey(emailKey(ref))
        : undefined;
  if (!found) throw new NotifyError('NOT_FOUND', `No contact ${JSON.stringify(ref)} to personalise the preview for`, { field: 'contact' });
  return found;
}
