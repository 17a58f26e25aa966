import type { Post } from '../core/outbound-delivery.ts';
import { SIGNATURE_HEADER, signatureHeader } from './signature.ts';

/** a receiver that has not answered within this is counted as failed (and tried again later) */
export const POST_TIMEOUT_MS = 5000;
/** of an answer's body only this much is read (for the error shown in the admin); the rest is dropped unread */
const BODY_PEEK = 512;

/**
 * Delivers with `fetchImpl`: a signed JSON POST, redirects not followed (a 3xx is a failure: the
 * signed body goes only where it was configured to), 5 s for the whole exchange, and never more
 * than a little of the answer read, however large it is.
 */
export function createPost(fetchImpl: typeof fetch, userAgent = 'notify-webhooks'): Post {
  return async (delivery, secret, nowMs) => {
    const signal = AbortSignal.timeout(POST_TIMEOUT_MS);
    try {
      const res = await fetchImpl(delivery.endpoint, {
        method: 'POST',
        redirect: 'manual',
        signal,
        body: delivery.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': userAgent,
          [SIGNATURE_HEADER]: signatureHeader(delivery.body, secret, Math.floor(nowMs / 1000)),
          'notify-event-id': delivery.event_id,
          'notify-event-type': delivery.type,
        },
      });
      const peek = await peekBody(res);
      if (res.status >= 200 && res.status < 300) return { ok: true };
      const where = res.status >= 300 && res.status < 400 ? ` (redirect to ${res.headers.get('location') ?? '?'} not followed)` : '';
      return { ok: false, error: `answered ${res.status}${where}${peek ? `: ${peek}` : ''}` };
    } catch (err) {
      if (signal.aborted) return { ok: false, error: `no answer within ${POST_TIMEOUT_MS / 1000} s` };
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return { ok: false, error: cause?.code ?? cause?.message ?? (err as Error).message };
    }
  };
}

/** The first bytes of the body as text; the stream is then cancelled, so the rest is never read. */
async function peekBody(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  try {
    const { value } = await reader.read();
    return value ? Buffer.from(value.subarray(0, BODY_PEEK)).toString('utf8').replace(/\s+/g, ' ').trim() : '';
  } catch {
    return '';
  } finally {
    await reader.cancel().catch(() => {});
  }
}
