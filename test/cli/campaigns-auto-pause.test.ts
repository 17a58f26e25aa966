// An auto-paused campaign resumed from the command line sends its remaining messages: the CLI's
// campaigns:resume is the same resume, and notify:send-campaign in another process judges only
// what came after it.
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { applyWebhookEvents } from '../../src/core/webhook-events.ts';
import { createNotify } from '../../src/notify.ts';
import { CliEnv } from '../reliability/helpers/processes.ts';

describe('notify campaigns:resume of an auto-paused campaign', () => {
  const env = new CliEnv({});
  const configFile = join(env.dir, 'notify.config.json');
  writeFileSync(configFile, JSON.stringify({ database: `sqlite:${join(env.dir, 'n.db')}`, mailer: `outbox:${join(env.dir, 'outbox')}`, fromEmail: 'news@example.com', logLevel: 'silent', autoPauseBounceRate: 0.05, batchSize: 1000 }));
  after(() => env.cleanup());
  const open = () => createNotify({ configFile, cwd: env.dir, env: {}, batchSize: 250 });
  const outbox = () => readdirSync(join(env.dir, 'outbox')).filter((f) => f.endsWith('.eml')).length;

  test('notify:send-campaign says why it sends nothing; after campaigns:resume it sends the rest', async () => {
    const notify = await open();
    await notify.lists.create({ name: 'news' });
    for (let i = 0; i < 300; i++) await notify.contacts.upsert({ email: `r${i}@example.com`, lists: ['news'] });
    const c = await notify.campaigns.create({ subject: 'Bouncy', text: 'x', list: 'news' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 250);
    const rows = await notify.context.store.db.selectFrom('notify_sends').select(['to_email', 'message_id']).where('campaign_id', '=', c.id).orderBy('id').limit(20).execute();
    await applyWebhookEvents(notify.context, 'test', rows.map((r) => ({ type: 'bounce' as const, email: r.to_email, message_id: r.message_id!, id: `b-${r.message_id}` })), 'cli');
    await notify.close();

    const stopped = await env.run(['notify:send-campaign', String(c.id)]);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, /auto-paused: 20 bounces and 0 complaints in 250 sends/);
    assert.equal(outbox(), 250);
    const resumed = await env.run(['campaigns:resume', String(c.id)]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`campaign ${c.id} resumed`));
    const rest = await env.run(['notify:send-campaign', String(c.id)]);
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(outbox(), 300, rest.stdout);
  });
});
