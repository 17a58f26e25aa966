import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Context } from '../../src/context.ts';
import { storeScopeLinks } from '../../src/core/link-lists.ts';
import { NotifyError } from '../../src/errors.ts';
import { forEachEngine, useNotify, useSinkNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';

/**
 * A message's links stored under its scope: many new ones at once, and another worker appending to
 * the same scope between this one's read and its write (the positions returned must still point at
 * this message's URLs), or winning every time (refused after five attempts, not looping).
 */

type Links = Context['store']['links'];

/** The instance's context with a store whose ensureScope lets `rival` write first, each time. */
function withRival(ctx: Context, rival: (links: Links, scope: string, urls: string[]) => Promise<void>): { ctx: Pick<Context, 'store' | 'clock'>; writes: () => number } {
  const links = ctx.store.links;
  let writes = 0;
  const raced: Links = Object.assign(Object.create(links), {
    ensureScope: async (scope: string, urls: string[], now: number) => {
      writes++;
      await rival(links, scope, urls);
      await links.ensureScope(scope, urls, now);
    },
  });
  return { ctx: { store: Object.assign(Object.create(ctx.store), { links: raced }), clock: ctx.clock }, writes: () => writes };
}

forEachEngine('a message with many links, all new to its campaign', (h) => {
  const world = useSinkNotify(h);

  test('each of eight links is stored once and its click redirects to it', async () => {
    const { sink, notify } = world;
    const targets = Array.from({ length: 8 }, (_, i) => `https://example.com/page-${i}`);
    await notify.contacts.upsert({ email: 'reader@example.com', lists: ['links'] });
    const c = await notify.campaigns.create({ subject: 'Links', html: targets.map((u, i) => `<a href="${u}">Link ${i}</a>`).join(' '), list: 'links' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 1);
    await sink.waitFor(1);
    const html = String(sink.messages[0].parsed.html);
    const clicks = [...html.matchAll(/href="([^"]*\/notify\/click\/[^"]+)"/g)].map((m) => new URL(m[1].replace(/&amp;/g, '&')));
    assert.equal(clicks.length, 8);
    const landed = [];
    for (const u of clicks) landed.push((await call(notify, `${u.pathname}${u.search}`, { redirect: 'manual' })).headers.get('location'));
    assert.deepEqual(landed, targets);
  });
});

forEachEngine('link lists: another worker appending to the same scope', (h) => {
  const notify = useNotify(h);

  test("a rival's URL stored first at a position this write wanted: the positions returned point at this message's URLs", async () => {
    const { ctx } = withRival(notify().context, async (links, scope) => {
      if ((await links.urlsForScope(scope)).length === 0) await links.ensureScope(scope, ['https://example.com/rival'], Date.now());
    });
    const urls = ['https://example.com/a', 'https://example.com/b'];
    const positions = await storeScopeLinks(ctx, 'raced-once', urls);
    const stored = await notify().context.store.links.urlsForScope('raced-once');
    assert.deepEqual(
      positions.map((p) => stored[p]),
      urls,
    );
    assert.equal(stored[0], 'https://example.com/rival');
  });

  test('a rival that wins every write: STORE_UNAVAILABLE naming the scope after five attempts', async () => {
    let n = 0;
    const raced = withRival(notify().context, async (links, scope, urls) => {
      n++;
      // a bound of this test's own, so that retries that never end fail it instead of hanging it
      if (n > 10) throw new Error('more than 10 writes: the retries do not end');
      await links.ensureScope(scope, urls.map((_, i) => `https://example.com/rival-${n}-${i}`), Date.now());
    });
    await assert.rejects(storeScopeLinks(raced.ctx, 'raced-always', ['https://example.com/mine']), (e: unknown) => {
      assert.ok(e instanceof NotifyError);
      assert.equal(e.code, 'STORE_UNAVAILABLE');
      assert.equal(e.message, 'Could not store the links of raced-always (concurrent writers kept changing them)');
      assert.deepEqual(e.details, { scope: 'raced-always' });
      return true;
    });
    assert.equal(raced.writes(), 5);
  });
});
