import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createNotify } from '../../src/notify.ts';
import { CliEnv } from '../reliability/helpers/processes.ts';

describe('notify campaigns:create --segment', () => {
  const env = new CliEnv({ logLevel: 'silent' });
  writeFileSync(join(env.dir, 'notify.config.json'), JSON.stringify({ database: `sqlite:${join(env.dir, 'n.db')}`, mailer: `outbox:${join(env.dir, 'outbox')}`, fromEmail: 'news@example.com', logLevel: 'silent' }));
  after(() => env.cleanup());
  const open = () => createNotify({ configFile: join(env.dir, 'notify.config.json'), cwd: env.dir, env: {} });

  test('the campaign reaches the list members the segment matches', async () => {
    const notify = await open();
    for (const [who, plan] of [['ann', 'pro'], ['bob', 'free'], ['cy', 'pro']]) await notify.contacts.upsert({ email: `${who}@example.com`, lists: who === 'cy' ? [] : ['news'], attributes: { plan } });
    await notify.close();

    const r = await env.run(['campaigns:create', '-s', 'Pro news', '--html', '<p>x</p>', '--list', 'news', '--segment', '{"attr":"plan","eq":"pro"}']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /list news, narrowed by its segment/);
    const sent = await env.run(['notify:send-campaign', r.stdout.trim(), '--all']);
    assert.equal(sent.code, 0, sent.stderr);
    const to = readdirSync(join(env.dir, 'outbox'))
      .filter((f) => f.endsWith('.eml'))
      .map((f) => /^To: (.*)$/m.exec(readFileSync(join(env.dir, 'outbox', f), 'utf8'))?.[1]);
    assert.deepEqual(to, ['ann@example.com']);
  });

  test('bad segments: a clear message, exit 1, nothing stored; hostile values are data', async () => {
    const deep = `${'{"not":'.repeat(1000)}{"attr":"plan","exists":true}${'}'.repeat(1000)}`;
    const cases: [string, RegExp][] = [
      ['not json', /segment.*JSON.*\[INVALID_INPUT\]/i],
      ['{"like":"%"}', /unknown filter "like" \[INVALID_INPUT\]/],
      [deep, /\[INVALID_INPUT\]/],
      ['{"opened":987654}', /\[NOT_FOUND\]/],
      ['{"list":"nope"}', /\[NOT_FOUND\]/],
    ];
    const before = await countCampaigns(open);
    for (const [segment, expected] of cases) {
      const r = await env.run(['campaigns:create', '-s', 'x', '--html', '<p>x</p>', '--segment', segment]);
      assert.equal(r.code, 1, `${segment.slice(0, 40)}: ${r.stdout}`);
      assert.match(r.stderr, expected, segment.slice(0, 40));
    }
    assert.equal(await countCampaigns(open), before);
    const hostile = await env.run(['campaigns:create', '-s', 'x', '--html', '<p>x</p>', '--segment', `{"attr":"plan","eq":"' OR 1=1 --"}`]);
    assert.equal(hostile.code, 0, hostile.stderr);
    const notify = await open();
    try {
      const stored = (await notify.campaigns.get(Number(hostile.stdout)))!;
      assert.deepEqual(stored.segment, { attr: 'plan', eq: "' OR 1=1 --" });
      assert.equal(await notify.contacts.count({ segment: stored.segment! }), 0, 'the value matched as text, nobody has it');
    } finally {
      await notify.close();
    }
  });
});

async function countCampaigns(open: () => ReturnType<typeof createNotify>): Promise<number> {
  const notify = await open();
  try {
    const row = await notify.context.store.db.selectFrom('notify_campaigns').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await notify.close();
  }
}
