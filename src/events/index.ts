import { SIGNATURE_HEADER, signatureHeader, type VerifyOptions, verify } from './signature.ts';

/** For receivers of notify's outgoing webhooks (also `notify.events`). */
export const events = { verify, sign: signatureHeader, header: SIGNATURE_HEADER };
export type { VerifyOptions };
export { createPost } from './post.ts';
export { createEventSink } from './sink.ts';
