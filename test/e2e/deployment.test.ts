// A deployment as a user runs one: `notify serve` and `notify worker` as separate processes of the
// real CLI, configured only by notify.config.json (string options), a real SMTP server as the
// mailer, and nothing but sockets and CLI commands to drive them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { SinkMessage } from '../helpers/smtp-sink.ts';
import { contactStatus, queryRows } from './database.ts';
import { Deployment, describeEachEngine, type NotifyProcess, waitUntil } from './harness.ts';
import { delivered, listUnsubscribeUrl, pixelUrl, READER, recipient, trackedLinks } from './mail.ts';

const READERS_CSV = ['email,name,plan', 'ann@example.com,Ann,', 'bob@example.com,Bob,pro', 'cy@example.com,Cy,team', 'dee@example.com,Dee,pro'].join('\n');

/** Each branch of the template links somewhere else, so a later batch adds links the first did not have. */
const DESTINATIONS: Record<string, string> = {
  'Start here': 'https://shop.example/basic',
  'Pro offers': 'https://shop.example/pro?ref=news&v=2',
  'Team offers': 'https://shop.example/team',
  'Read the blog': 'https://blog.example/spring',
};
const BRANCH: Record<string, string> = { 'ann@example.com': 'Start here', 'bob@example.com': 'Pro offers', 'cy@example.com': 'Team offers', 'dee@example.com': 'Pro offers' };
const SPRING_HTML = [
  '<p>Hello {{ contact.name }},</p>',
  '{% if contact.attributes.plan == "pro" %}<p><a href="https://shop.example/pro?ref=news&amp;v=2">Pro offers</a></p>',
  '{% elsif contact.attributes.plan == "team" %}<p><a href="https://shop.example/team">Team offers</a></p>',
  '{% else %}<p><a href="https://shop.example/basic">Start here</a></p>{% endif %}',
  '<p><a href="https://blog.example/spring">Read the blog</a></p>',
].join('\n');

interface Hit {
  url: string;
  status: number;
  location: string | null;
  contentType: string | null;
  bytes: number;
}

async function hit(url: string, init: RequestInit = {}): Promise<Hit> {
  const res = await fetch(url, { redirect: 'manual', ...init, headers: { ...READER, ...(init.headers as Record<string, string>) } });
  const body = Buffer.from(await res.arrayBuffer());
  return { url, status: res.status, location: res.headers.get('location'), contentType: res.headers.get('content-type'), bytes: body.length };
}

/** What a reader does with one delivered email: loads its images, then clicks every tracked link. */
async function readAndClick(message: SinkMessage): Promise<{ to: string; pixel: Hit; clicks: (Hit & { text: string })[] }> {
  const pixel = await hit(pixelUrl(message));
  const clicks = [];
  for (const link of trackedLinks(message)) clicks.push({ text: link.text, ...(await hit(link.href)) });
  return { to: recipient(message), pixel, clicks };
}

/** The id a `campaigns:create` printed (its first stdout line). */
const campaignId = (stdout: string) => {
  const id = stdout.trim().split('\n')[0];
  assert.match(id, /^\d+$/, `campaigns:create printed ${JSON.stringify(stdout)}`);
  return id;
};

describeEachEngine('as deployed: notify serve + notify worker + CLI, configured by files', (engine) => {
  let d: Deployment;
  let server: string;
  let worker: NotifyProcess | undefined;
  let spring = '';
  const readings: Awaited<ReturnType<typeof readAndClick>>[] = [];

  before(async () => {
    d = await Deployment.open(engine, { config: { batchSize: '1', doubleOptIn: 'true' } });
    server = (await d.serve()).url;
  });
  after(() => d?.close());

  test('double opt-in: the capture post sends the confirmation over SMTP, its link confirms on POST only', async () => {
    const bad = await fetch(`${server}/notify/capture`, { method: 'POST', headers: { accept: 'application/json' }, body: new URLSearchParams({ email: 'not-an-address' }) });
    assert.equal(bad.status, 422);
    assert.deepEqual({ ...(await bad.json()), errors: undefined }, { ok: false, code: 'invalid_email', errors: undefined });
    assert.deepEqual(await queryRows(d.database, 'select email from notify_contacts'), [], 'a refused post stores nothing');

    const res = await fetch(`${server}/notify/capture`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: 'nia@example.com', name: 'Nia' }),
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).ok, true);
    assert.equal(await contactStatus(d.database, 'nia@example.com'), 'pending');

    const [mail] = await delivered(d.sink, (m) => recipient(m) === 'nia@example.com', 1, 8_000).catch((err) => {
      throw new Error(`${err.message}: the confirmation email never reached the SMTP server\n${d.describe()}`);
    });
    assert.equal(mail.parsed.subject, 'Please confirm your subscription');
    const link = new RegExp(`${d.baseUrl}/notify/confirm/[A-Za-z0-9_-]+`).exec(String(mail.parsed.text))?.[0];
    assert.ok(link, `confirm link in ${mail.parsed.text}`);

    const page = await hit(link);
    assert.equal(page.status, 200);
    assert.equal(await contactStatus(d.database, 'nia@example.com'), 'pending', 'opening the link (as a mail scanner does) changes nothing');
    const confirm = await hit(link, { method: 'POST' });
    assert.equal(confirm.status, 200);
    assert.equal(await contactStatus(d.database, 'nia@example.com'), 'subscribed');
  });

  test('a campaign sent in batches by the worker: every link of every batch redirects through the serve process', async () => {
    d.writeFile('readers.csv', READERS_CSV);
    assert.match(await d.cli(['contacts:import', 'readers.csv', '--list', 'readers']), /created 4, updated 0, unchanged 0, rejected 0/);
    spring = campaignId(await d.cli(['campaigns:create', '--subject', 'Spring news for {{ contact.name }}', '--html', SPRING_HTML, '--list', 'readers']));

    // The first batch (batchSize 1) by hand; the serve process then reads its links on the first click.
    assert.match(await d.cli(['notify:send-campaign', spring]), /sent 1, failed 0, suppressed 0, 3 remaining/);
    const [first] = await delivered(d.sink, (m) => /^Spring news/.test(m.parsed.subject ?? ''), 1);
    readings.push(await readAndClick(first));

    // The worker sends the rest, one recipient a batch; their branches add links to the campaign.
    worker = await d.worker(0.2);
    await worker.waitForOutput(new RegExp(`campaign ${spring}: .*nothing remains`), 30_000);
    const all = await delivered(d.sink, (m) => /^Spring news/.test(m.parsed.subject ?? ''), 4);
    for (const m of all.slice(1)) readings.push(await readAndClick(m));

    assert.deepEqual(readings.map((r) => r.to).sort(), Object.keys(BRANCH).sort(), 'each reader got exactly one email');
    for (const r of readings) {
      assert.deepEqual(r.clicks.map((c) => c.text).sort(), [BRANCH[r.to], 'Read the blog'].sort(), `${r.to} got the links of their branch`);
      assert.equal(r.pixel.status, 200);
      assert.equal(r.pixel.contentType, 'image/gif');
      assert.equal(r.pixel.bytes, 43);
    }
    const link = new URL(trackedLinks(first)[0].href);
    const ref = link.searchParams.get('l') ?? '';
    link.searchParams.set('l', ref.slice(0, -2) + (ref.endsWith('xx') ? 'yy' : 'xx'));
    const forged = await hit(link.href);
    assert.deepEqual([forged.status, forged.location], [404, null], 'a tampered link reference redirects nowhere');
    const wrong = readings.flatMap((r) => r.clicks.filter((c) => ![302, 303].includes(c.status) || c.location !== DESTINATIONS[c.text]).map((c) => ({ to: r.to, link: c.text, status: c.status, location: c.location })));
    assert.deepEqual(wrong, [], 'every tracked link redirects to the URL the template gave it');
  });

  test('one-click unsubscribe from the List-Unsubscribe header: the next campaign does not reach the reader', async () => {
    const cy = d.sink.messages.find((m) => recipient(m) === 'cy@example.com' && /^Spring news/.test(m.parsed.subject ?? ''));
    assert.ok(cy, 'the campaign reached cy@example.com');
    assert.match(cy.parsed.headerLines.find((h) => h.key === 'list-unsubscribe-post')?.line ?? '', /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/i);
    const res = await hit(listUnsubscribeUrl(cy), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(res.status, 200);
    assert.equal(await contactStatus(d.database, 'cy@example.com'), 'unsubscribed');

    const summer = campaignId(await d.cli(['campaigns:create', '--subject', 'Summer news', '--html', '<p>Summer is here.</p>', '--list', 'readers']));
    const firstRun = await d.cli(['notify:send-campaign', summer]);
    if (!/nothing remains/.test(firstRun)) await worker!.waitForOutput(new RegExp(`campaign ${summer}: .*nothing remains`), 30_000);
    const got = d.sink.messages.filter((m) => m.parsed.subject === 'Summer news').map(recipient).sort();
    assert.deepEqual(got, ['ann@example.com', 'bob@example.com', 'dee@example.com']);
    const report = JSON.parse(await d.cli(['stats', summer, '--json']));
    assert.deepEqual({ ...report.stats, suppressed: report.suppressed }, { total: 4, sent: 3, failed: 0, opened: 0, clicked: 0, suppressed: 1 });
  });

  test('notify stats --json reports what the readers did', async () => {
    assert.ok(spring && readings.length === 4, 'the batched campaign ran');
    const redirected = (r: (typeof readings)[number]) => r.clicks.filter((c) => c.status === 302 || c.status === 303);
    const expected = {
      stats: { total: 4, sent: 4, failed: 0, opened: readings.filter((r) => r.pixel.status === 200).length, clicked: readings.filter((r) => redirected(r).length > 0).length },
      unsubscribed: 1,
      links: Object.fromEntries(Object.values(DESTINATIONS).map((url) => [url, readings.flatMap(redirected).filter((c) => c.location === url).length]).filter(([, n]) => n !== 0)),
    };
    // The serve process writes opens and clicks in the background (group commit): wait until they are stored.
    const answered = readings.filter((r) => r.pixel.status === 200).length + readings.flatMap(redirected).length;
    await waitUntil(
      async () => {
        const [{ n }] = await queryRows<{ n: number }>(d.database, "select count(*) as n from notify_events where campaign_id = ? and type in ('open', 'click')", [Number(spring)]);
        return Number(n) >= answered ? true : undefined;
      },
      10_000,
      `the ${answered} answered opens and clicks to be stored`,
    );
    const report = JSON.parse(await d.cli(['stats', spring, '--json']));
    const links = report.links.filter((l: { clicks: number }) => l.clicks > 0).map((l: { url: string; clicks: number }) => [l.url, l.clicks]);
    assert.deepEqual({ stats: report.stats, unsubscribed: report.unsubscribed, links: Object.fromEntries(links) }, expected);
  });
});
