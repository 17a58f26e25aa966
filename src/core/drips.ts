import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import type { ContentInput } from '../render/source.ts';
import { minutes } from './clock.ts';
import type { ContactsService } from './contacts.ts';
import { checkListName } from './lists.ts';
import { checkMessage, optionalString } from './message-input.ts';
import type { NewStep } from './storage/sequences.ts';
import { type Enrollment, isSuppressedStatus, type Sequence } from './types.ts';

export interface StepInput extends ContentInput {
  /** minutes after the previous step was sent; for the first step, after enrollment */
  delayMinutes: number;
  subject: string;
  /** layout view name; default: defaultLayout; false: none */
  layout?: string | false | null;
}

export interface SequenceInput {
  name: string;
  steps: StepInput[];
  /**
   * `{ listJoined: name }`: a contact that joins that list from now on (upsert, subscribe, import,
   * capture; with double opt-in once confirmed) is enrolled by itself, once per contact and sequence
   * ever. The list is created when missing.
   */
  trigger?: { listJoined: string } | null;
}

export interface EnrollInput {
  /** contact id or email address */
  contact: number | string;
  /** sequence id or name */
  sequence: number | string;
}

export interface DripsService {
  createSequence(input: SequenceInput): Promise<Sequence>;
  getSequence(idOrName: number | string): Promise<Sequence | undefined>;
  enroll(input: EnrollInput): Promise<Enrollment>;
  getEnrollment(id: number): Promise<Enrollment | undefined>;
}

const MAX_STEPS = 100;
/** ten years: anything longer is a unit mistake (seconds or milliseconds given as minutes) */
const MAX_DELAY = 10 * 366 * 24 * 60;

export function createDripsService(ctx: Context, contacts: Pick<ContactsService, 'get'>): DripsService {
  const getSequence = async (idOrName: number | string) => {
    if (typeof idOrName === 'number') return Number.isSafeInteger(idOrName) && idOrName > 0 ? ctx.store.sequences.getById(idOrName) : undefined;
    if (typeof idOrName !== 'string' || idOrName.trim() === '') return undefined;
    return (await ctx.store.sequences.getByName(idOrName)) ?? (/^[0-9]{1,15}$/.test(idOrName) ? ctx.store.sequences.getById(Number(idOrName)) : undefined);
  };
  return {
    async createSequence(input) {
      const { name, steps } = validateSequence(ctx, input);
      const triggerListId = input.trigger == null ? null : await triggerList(ctx, input.trigger);
      return ctx.store.sequences.create(name, steps, ctx.clock.now(), triggerListId);
    },
    getSequence,
    async enroll(input) {
      if (typeof input !== 'object' || input === null) throw new NotifyError('INVALID_INPUT', 'drips.enroll() needs { contact, sequence }');
      if (typeof input.contact !== 'number' && typeof input.contact !== 'string') throw new NotifyError('INVALID_INPUT', 'enroll: contact must be a contact id or email address', { field: 'contact' });
      if (typeof input.sequence !== 'number' && typeof input.sequence !== 'string') throw new NotifyError('INVALID_INPUT', 'enroll: sequence must be a sequence id or name', { field: 'sequence' });
      const contact = await contacts.get(input.contact);
      if (!contact) throw new NotifyError('NOT_FOUND', `Contact ${JSON.stringify(input.contact)} not found`, { field: 'contact' });
      const sequence = await getSequence(input.sequence);
      if (!sequence) throw new NotifyError('NOT_FOUND', `Sequence ${JSON.stringify(input.sequence)} not found`, { field: 'sequence' });
      if (isSuppressedStatus(contact.status)) {
        throw new NotifyError('SUPPRESSED', `Contact ${contact.id} is ${contact.status}; a suppressed contact cannot be enrolled`, { contactId: contact.id, status: contact.status });
      }
      const now = ctx.clock.now();
      return ctx.store.enrollments.create({ sequence_id: sequence.id, contact_id: contact.id, next_send_at: now + minutes(sequence.steps[0].delay_minutes) }, now);
    },
    async getEnrollment(id) {
      if (!Number.isSafeInteger(id) || id < 1) return undefined;
      return ctx.store.enrollments.getById(id);
    },
  };
}

/** The list a trigger names (created when missing, as contact writes create the lists they name). */
async function triggerList(ctx: Context, trigger: unknown): Promise<number> {
  const keys = typeof trigger === 'object' && trigger !== null ? Object.keys(trigger) : [];
  if (keys.length !== 1 || keys[0] !== 'listJoined') throw new NotifyError('INVALID_INPUT', 'trigger must be { listJoined: <list name> }', { field: 'trigger' });
  const name = checkListName((trigger as { listJoined: unknown }).listJoined, 'trigger.listJoined');
  const found = await ctx.store.lists.byName(name);
  if (found) return found.id;
  await ctx.store.lists.create({ name, description: null, public: false }, ctx.clock.now());
  return (await ctx.store.lists.byName(name))!.id;
}

/** Every step is checked like a campaign (subject, one body, files, layout, Liquid), so a broken sequence fails now. */
function validateSequence(ctx: Context, input: SequenceInput): { name: string; steps: NewStep[] } {
  if (typeof input !== 'object' || input === null) throw new NotifyError('INVALID_INPUT', 'drips.createSequence() needs { name, steps }');
  const name = optionalString(input.name, 'name', 200);
  if (!name || name.trim() === '') throw new NotifyError('INVALID_INPUT', 'A sequence needs a name', { field: 'name' });
  if (!Array.isArray(input.steps) || input.steps.length === 0 || input.steps.length > MAX_STEPS) {
    throw new NotifyError('INVALID_INPUT', `A sequence needs 1 to ${MAX_STEPS} steps`, { field: 'steps' });
  }
  const steps = input.steps.map((step, i): NewStep => {
    const field = `steps[${i}].`;
    if (typeof step !== 'object' || step === null) throw new NotifyError('INVALID_INPUT', `${field.slice(0, -1)} must be an object`, { field: `steps[${i}]` });
    const delay = step.delayMinutes;
    if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY) {
      throw new NotifyError('INVALID_INPUT', `${field}delayMinutes must be a whole number of minutes from 0 to ${MAX_DELAY}`, { field: `${field}delayMinutes` });
    }
    let checked: ReturnType<typeof checkMessage>;
    try {
      checked = checkMessage(ctx, step, field);
    } catch (err) {
      if (err instanceof NotifyError) throw new NotifyError(err.code, `${field.slice(0, -1)}: ${err.message}`, { ...err.details, step: i }, { cause: err });
      throw err;
    }
    return {
      delay_minutes: delay,
      subject: checked.subject,
      html: step.html || null,
      markdown: step.markdown || null,
      markdown_file: step.markdownFile || null,
      text: step.text || null,
      layout: checked.layout,
    };
  });
  return { name, steps };
}
