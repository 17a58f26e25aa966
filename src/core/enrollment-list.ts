import type { Context } from '../context.ts';
import { NotifyError } from '../errors.ts';
import { ENROLLMENT_STATUSES, type Enrollment, type EnrollmentStatus } from './types.ts';

export interface EnrollmentQuery {
  status?: EnrollmentStatus;
  /** the `next` of the previous page */
  after?: string | null;
  /** default 50, at most 1000 */
  limit?: number;
}

export interface EnrollmentPage {
  enrollments: Enrollment[];
  next: string | null;
}

/** A page of one sequence's enrollments in id order, with an opaque cursor like contacts.list(). */
export async function listEnrollments(ctx: Pick<Context, 'store'>, sequenceId: number, query: EnrollmentQuery = {}): Promise<EnrollmentPage> {
  const limit = query.limit ?? 50;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new NotifyError('INVALID_INPUT', 'limit must be a whole number from 1 to 1000', { field: 'limit' });
  if (query.status !== undefined && !(ENROLLMENT_STATUSES as readonly string[]).includes(query.status)) {
    throw new NotifyError('INVALID_INPUT', `status must be one of ${ENROLLMENT_STATUSES.join(', ')}`, { field: 'status' });
  }
  const m = query.after == null ? null : /^e:([0-9]{1,15})$/.exec(Buffer.from(String(query.after).slice(0, 40), 'base64url').toString());
  if (query.after != null && !m) throw new NotifyError('INVALID_INPUT', 'after must be the `next` cursor of a previous page', { field: 'after' });
  const rows = await ctx.store.enrollments.page(sequenceId, { status: query.status }, m ? Number(m[1]) : 0, limit + 1);
  const enrollments = rows.slice(0, limit);
  return { enrollments, next: rows.length > limit ? Buffer.from(`e:${enrollments[enrollments.length - 1].id}`).toString('base64url') : null };
}
