// One `notify serve` on a SQLite file answering capture posts and provider webhooks while other
// notify processes (serve, worker, migrate) start and stop on the same file, as a deployment does
// when a worker or a second server starts beside a running one. Each starting process migrates
// (taking the file's write lock for a moment) and opens its connection; the running server's
// answers must not change because of it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { queryRows } from './database.ts';
import { Deployment, freePort } from './harness.ts';
import { providerRigs } from './webhook-requests.ts';

/** rounds of processes started together beside the requests */
const ROUNDS = 2;
/** requests in flight at once against the running server */
const CLIENTS = 4;

describe('SQLite: a running notify serve beside other notify processes starting on the same file', () => {
  const { postmark } = providerRigs();
  let d: Deployment;
  let url: string;

  before(async () => {
    d = await Deployment.open('sqlite', { config: { ...postmark.config, captureRateLimit: '0' } });
    ({ url } = await d.serve());
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

  test('every capture post and webhook is answered 200 and stored while the others start', async () => {
    const answers: string[] = [];
    const captured: string[] = [];
    let starting = true;
    const client = async (n: number) => {
      for (let i = 0; starting; i++) {
        const email = `start-${n}-${i}@example.com`;
        const capture = await fetch(`${url}/notify/capture`, { method: 'POST', headers: { accept: 'application/json' }, body: new URLSearchParams({ email }) });
        if (capture.status !== 200) answers.push(`capture ${email}: ${capture.status} ${await capture.text()}`);
        else captured.push(email);
        // every other address then bounces through the provider's webhook
        if (i % 2 === 1 || capture.status !== 200) continue;
        const bounce = await fetch(`${url}/notify/webhook`, bounceOf(email));
        if (bounce.status !== 200) answers.push(`bounce ${email}: ${bounce.status} ${await bounce.text()}`);
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
  });
});
