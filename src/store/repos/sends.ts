import type { Kysely } from 'kysely';
import type { SendsRepo } from '../../core/storage/sends.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { createSendClaims } from './send-claims.ts';
import { createSendRetakes } from './send-retakes.ts';
import { createSendFinisher } from './send-outcomes.ts';
import { toSendRecord, values } from './send-rows.ts';
import { createWaitingSends } from './send-waiting.ts';
import { createWaitingStops } from './send-waiting-stops.ts';

/** The sends repository, assembled from its parts: claims, retakes, outcomes, the waiting sends and their stops, lookups. */
export function createSendsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): SendsRepo {
  const one = async (where: 'id' | 'token' | 'message_id', v: string | number) => {
    const row = await db.selectFrom('notify_sends').selectAll().where(where, '=', v as never).executeTakeFirst();
    return row && toSendRecord(row);
  };
  return {
    async create(row, now) {
      return toSendRecord(await db.insertInto('notify_sends').values(values(row, now)).returningAll().executeTakeFirstOrThrow());
    },
    ...createSendClaims(db),
    ...createSendRetakes(db),
    finish: createSendFinisher(db, dialect, outbox),
    ...createWaitingSends(db),
    ...createWaitingStops(db),
    getById: (id) => one('id', id),
    getByToken: (token) => one('token', token),
    getByMessageId: (messageId) => one('message_id', messageId),
  };
}
