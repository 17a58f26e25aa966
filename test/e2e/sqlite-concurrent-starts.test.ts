// One `notify serve` on a SQLite file answering capture posts, provider webhooks, opens and clicks while other
// notify processes (serve, worker, migrate) start and stop on the same file, as a deployment does
// when a worker or a second server starts beside a running one. Each starting process migrates
// (taking the file's write lock for a moment) and opens its connection; the running server's
// answers must not change because of it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, freePort, waitUntil } from './harness.ts';
import { delivered, pixelUrl, READER, trackedLinks } from './mail.ts';
import { providerRigs } from './webhook-requests.ts';

/** rounds of processes started together beside the requests */
const ROUNDS = 2;
/** requests in flight at once against the running server */
const CLIENTS = 4;

describe('SQLite: a running notify serve beside other notify processes starting on the same file', () => {
  const { postmark } = providerRigs();
  let d: Deployment;
  let url: string;
  /** each reader's pixel and tracked link, on the running server */
  let tracked: { pixel: string; link: string }[];

  before(async () => {
    d = await Deployment.open('sqlite', { config: { ...postmark.config, captureRateLimit: '0' } });
    ({ url } = await d.serve());
    d.writeFile('readers.csv', ['email', 'r1@example.com', 'r2@example.com'].join('\n'));
    await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']);
    const id = (await d.cli(['campaigns:create', '--subject', 'Tracked', '--html', '<p><a href="https://example.com/story">story</a></p>', '--list', 'readers'])).trim().split('\n')[0];
    await d.cli(['notify:send-campaign', id]);
    const here = (u: string) => u.replace(/^https?:\/\/[^/]+/, url);
    tracked = (await delivered(d.sink, (m) => m.parsed.subject === 'Tracked', 2)).map((m) => ({ pixel: here(pixelUrl(m)), link: here(trackedLinks(m)[0].href) }));
  });
  after(() => d?.close());

  /** Postmark's documented bounce with an ID of its own (Postmark applies an ID once, and the example's is fixed) */
  let bounces = 0;
  const bounceOf = (email: string): RequestInit => {
    const init = postmark.bounce(email);
    return { ...init, body: JSON.stringify({ ...JSON.parse(String(init.body)), ID: ++bounces }) };
  };

  /** serve, worker and migrate started together, each left once it is up (migrate runs to its end) */
  async function startOthers(): Promise<void> {
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all([
        d.serve({ port: await freePort(), name: `serve (round ${round})` }).then(({ process }) => process.stop()),
        d.worker(60).then((p) => p.stop()),
        d.cli(['migrate']),
      ]);
    }
  }

  test('every capture post, webhook, open and click is answered and stored while the others start', async () => {
    const answers: string[] = [];
    const captured: string[] = [];
    const answered = { open: 0, click: 0 };
    let starting = true;
    const track = async ({ pixel, link }: (typeof tracked)[number]) => {
      const open = await fetch(pixel, { headers: READER });
      if (open.status === 200) answered.open++;
      else answers.push(`open: ${open.status} ${await open.text()}`);
      const click = await fetch(link, { headers: READER, redirect: 'manual' });
      if (click.status === 302) answered.click++;
      else answers.push(`click: ${click.status} ${await click.text()}`);
    };
    const client = async (n: number) => {
      for (let i = 0; starting; i++) {
        const email = `start-${n}-${i}@example.com`;
        const capture = await fetch(`${url}/notify/capture`, { method: 'POST', headers: { accept: 'application/json' }, body: new URLSearchParams({ email }) });
        if (capture.status !== 200) answers.push(`capture ${email}: ${capture.status} ${await capture.text()}`);
        else captured.push(email);
        // every other address then bounces through the provider's webhook; between them a reader opens and clicks
        if (i % 2 === 1) await track(tracked[n % tracked.length]);
        else if (capture.status === 200) {
          const bounce = await fetch(`${url}/notify/webhook`, bounceOf(email));
          if (bounce.status !== 200) answers.push(`bounce ${email}: ${bounce.status} ${await bounce.text()}`);
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));
    try {
      await startOthers();
    } finally {
      starting = false;
      await Promise.all(clients);
    }
    assert.deepEqual(answers, [], `answers other than 200 while processes started:\n${answers.join('\n')}\n${d.describe()}`);
    assert.ok(captured.length >= CLIENTS, `the requests ran while the processes started (${captured.length} captures)`);
    const rows = await queryRows<{ email: string; status: string }>(d.database, "select email, status from notify_contacts where email like 'start-%'");
    const stored = new Map(rows.map((r) => [r.email, r.status]));
    const expected = captured.map((e) => [e, Number(e.split('-')[2].split('@')[0]) % 2 === 0 ? 'bounced' : 'subscribed']);
    assert.deepEqual(
      expected.filter(([e, status]) => stored.get(e) !== status),
      [],
      'every accepted capture is a contact, bounced when its bounce was accepted',
    );
    const counted = async () => {
      const rows = await queryRows<{ type: 'open' | 'click'; n: number }>(d.database, "select type, count(*) as n from notify_events where type in ('open', 'click') group by type");
      return Object.fromEntries(rows.map((r) => [r.type, r.n]));
    };
    // opens and clicks are written in batches a moment after their answers
    const allStored = async () => {
      const n = await counted();
      return n.open === answered.open && n.click === answered.click ? true : undefined;
    };
    await waitUntil(allStored, 15_000, 'every answered open and click stored').catch(async (err) =>
      assert.fail(`${err.message}: answered ${JSON.stringify(answered)}, stored ${JSON.stringify(await counted())}`),
    );
  });
});
