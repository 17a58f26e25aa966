import type { Outbox } from '../outbox.ts';

/** an endpoint wants `notify:email.sent` or `.failed`: the outcomes then go through sends.finish, which writes those events */
export const outcomesAnnounced = (outbox: Outbox) => outbox.wants('notify:email.sent') || outbox.wants('notify:email.failed');
