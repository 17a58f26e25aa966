import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { manualClock } from '../../src/core/clock.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';

const TOKEN = 'console-token-0123456789abcdef';
const T0 = Date.UTC(2026, 0, 1, 9, 0);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const PAGE = { accept: 'text/html', 'sec-fetch-mode': 'navigate' };

/** A browser's cookie jar for the in-process controller: keeps what Set-Cookie says, sends it back. */
class Browser {
  cookies = new Map<string, string>();
  constructor(
    private readonly notify: () => import('../../src/notify.ts').Notify,
    private readonly origin = 'http://localhost:3000',
  ) {}
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await this.notify().fetch(new Request(`${this.origin}${path}`, { ...init, headers, redirect: 'manual' }));
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const [k, v] = pair.split('=');
      if (attrs.some((a) => /max-age=0/i.test(a.trim()))) this.cookies.delete(k);
      else this.cookies.set(k, v);
    }
    return res;
  }
  async page(path: string): Promise<{ res: Response; html: string; csrf: string }> {
    const res = await this.request(path, { headers: PAGE });
    const html = await res.text();
    return { res, html, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
  }
  post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.request(path, { method: 'POST', headers: { ...FORM, ...headers }, body: new URLSearchParams(form) });
  }
  async signIn(token = TOKEN): Promise<Response> {
    const { csrf } = await this.page('/notify/admin/sign-in');
    return this.post('/notify/admin/sign-in', { csrf, token, next: '/notify/admin' });
  }
}

forEachEngine('console sign-in', (h) => {
  const clock = manualClock(T0);
  const notify = useNotify(h, { adminToken: TOKEN, clock });

  test('a browser without credentials is sent to the sign-in page; a script gets the Basic challenge', async () => {
    const res = await new Browser(notify).request('/notify/admin/campaigns/1?bucket=1h', { headers: PAGE });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/notify/admin/sign-in?next=%2Fnotify%2Fadmin%2Fcampaigns%2F1%3Fbucket%3D1h');
    const script = await call(notify(), '/notify/admin');
    assert.equal(script.status, 401);
    assert.match(script.headers.get('www-authenticate') ?? '', /^Basic /);
    const post = await new Browser(notify).post('/notify/admin/campaigns', { subject: 'x' });
    assert.equal(post.status, 401, 'a POST is never redirected');
  });

  test('the right token gives an HttpOnly, SameSite=Strict session cookie scoped to /notify/admin', async () => {
    const b = new Browser(notify);
    const res = await b.signIn();
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/notify/admin');
    const line = res.headers.getSetCookie().find((l) => l.startsWith('notify_admin_auth='));
    assert.match(line ?? '', /^notify_admin_auth=[0-9]{13}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/notify\/admin; HttpOnly; SameSite=Strict$/);
    const { res: dash, html } = await b.page('/notify/admin');
    assert.equal(dash.status, 200);
    assert.match(html, /id="sign-out"/);
    // on https the cookies are Secure
    const s = await new Browser(notify, 'https://admin.example').signIn();
    for (const l of s.headers.getSetCookie()) assert.match(l, /; Secure/, l);
  });

  test('a tampered, expired or other-token cookie is no session', async () => {
    const b = new Browser(notify);
    await b.signIn();
    const good = b.cookies.get('notify_admin_auth')!;
    const tampered = good.replace(/\.(.)/, (_, ch: string) => `.${ch === 'A' ? 'B' : 'A'}`);
    for (const value of [tampered, `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`, `9${good.slice(1)}`, 'x', '']) {
      b.cookies.set('notify_admin_auth', value);
      assert.equal((await b.request('/notify/admin', { headers: PAGE })).status, 303, value);
    }
    b.cookies.set('notify_admin_auth', good);
    assert.equal((await b.request('/notify/admin', { headers: PAGE })).status, 200);
    clock.advance(12 * 3_600_000 + 1000);
    assert.equal((await b.request('/notify/admin', { headers: PAGE })).status, 303, 'expired after 12 hours');
    clock.set(T0);
  });

  test('sign-in without the form token, or from another site, is refused; the next page stays on this server', async () => {
    const b = new Browser(notify);
    const { csrf } = await b.page('/notify/admin/sign-in');
    assert.equal((await b.post('/notify/admin/sign-in', { token: TOKEN })).status, 403);
    assert.equal((await b.post('/notify/admin/sign-in', { token: TOKEN, csrf }, { 'sec-fetch-site': 'cross-site' })).status, 403);
    assert.equal((await b.post('/notify/admin/sign-in', { token: TOKEN, csrf }, { origin: 'https://evil.example' })).status, 403);
    assert.equal(b.cookies.has('notify_admin_auth'), false);
    for (const next of ['//evil.example/x', 'https://evil.example/', '/notify/admin//evil.example', '/notify/admin\\@evil.example', '/elsewhere']) {
      // signing in renews the form session: each attempt reads the sign-in page again
      b.cookies.delete('notify_admin_auth');
      const fresh = (await b.page('/notify/admin/sign-in')).csrf;
      const res = await b.post('/notify/admin/sign-in', { token: TOKEN, csrf: fresh, next });
      assert.equal(res.status, 303, next);
      assert.equal(res.headers.get('location'), '/notify/admin', next);
    }
    b.cookies.delete('notify_admin_auth');
    const fresh = (await b.page('/notify/admin/sign-in')).csrf;
    const kept = await b.post('/notify/admin/sign-in', { token: TOKEN, csrf: fresh, next: '/notify/admin/outbox?page=2' });
    assert.equal(kept.headers.get('location'), '/notify/admin/outbox?page=2');
  });

  test('sign-out needs the form token and ends the session', async () => {
    const b = new Browser(notify);
    await b.signIn();
    const { csrf } = await b.page('/notify/admin');
    assert.equal((await b.post('/notify/admin/sign-out', {})).status, 403);
    assert.equal((await b.request('/notify/admin', { headers: PAGE })).status, 200, 'still signed in');
    const out = await b.post('/notify/admin/sign-out', { csrf });
    assert.equal(out.status, 303);
    assert.equal(out.headers.get('location'), '/notify/admin/sign-in');
    assert.equal(b.cookies.has('notify_admin_auth'), false);
    assert.equal((await b.request('/notify/admin', { headers: PAGE })).status, 303);
  });

  test('wrong tokens are counted per network: the eleventh is 429 with Retry-After, and then even the right one waits', async () => {
    const b = new Browser(notify);
    const { csrf } = await b.page('/notify/admin/sign-in');
    for (const [i, wrong] of ['', 'x', TOKEN.slice(0, -1), `${TOKEN} `, '<script>alert(1)</script>', 'y'.repeat(5000), 'guess-6', 'guess-7', 'guess-8', 'guess-9'].entries()) {
      const res = await b.post('/notify/admin/sign-in', { csrf, token: wrong });
      assert.equal(res.status, 401, `attempt ${i + 1}`);
      assert.match(await res.text(), /That is not the admin token/);
    }
    const limited = await b.post('/notify/admin/sign-in', { csrf, token: 'guess-11' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await b.post('/notify/admin/sign-in', { csrf, token: TOKEN })).status, 429);
    assert.equal(b.cookies.has('notify_admin_auth'), false);
    clock.advance(61_000);
    assert.equal((await b.post('/notify/admin/sign-in', { csrf, token: TOKEN })).status, 303, 'after the window');
    clock.set(T0);
  });
});

forEachEngine('console and API sign-in budget', (h) => {
  const notify = useNotify(h, { adminToken: TOKEN, clock: manualClock(T0) });

  test('wrong tokens at the API and at the sign-in form share one budget per network (the default memory store too)', async () => {
    const b = new Browser(notify);
    const { csrf } = await b.page('/notify/admin/sign-in');
    for (let i = 0; i < 5; i++) {
      const res = await call(notify(), '/notify/api/v1/lists', { headers: { authorization: `Bearer guess-${i}` } });
      assert.equal(res.status, 401, `API attempt ${i + 1}`);
    }
    for (let i = 5; i < 10; i++) assert.equal((await b.post('/notify/admin/sign-in', { csrf, token: `guess-${i}` })).status, 401, `form attempt ${i + 1}`);
    assert.equal((await b.post('/notify/admin/sign-in', { csrf, token: 'guess-10' })).status, 429, 'the eleventh, counted with the API attempts');
    assert.equal((await call(notify(), '/notify/api/v1/lists', { headers: { authorization: 'Bearer guess-11' } })).status, 429, 'and the API counts the form attempts');
  });
});

forEachEngine('console compose', (h) => {
  const notify = useNotify(h, { adminToken: TOKEN, clock: manualClock(T0), baseUrl: 'https://mail.example' });
  const b = new Browser(notify);
  let csrf = '';
  before(async () => {
    await notify().contacts.upsert({ email: 'ann@example.com', name: 'Ann <b>bold</b>', lists: ['news'], attributes: { plan: 'pro' } });
    await notify().contacts.upsert({ email: 'bob@example.com', name: 'Bob', lists: ['news'], attributes: { plan: 'free' } });
    await notify().contacts.upsert({ email: 'cy@example.com', lists: ['news'] });
    await notify().contacts.unsubscribe('cy@example.com');
    await b.signIn();
    csrf = (await b.page('/notify/admin/campaigns/new')).csrf;
  });

  test('the preview is the pipeline render for the chosen contact, with no pixel and direct links, in a sandboxed document', async () => {
    const form = { csrf, subject: 'Hi {{ contact.name }}', format: 'markdown', body: 'Hello {{ contact.name }}, see [the shop](https://shop.example/sale?a=1&b=2).\n\n[Leave]({notify_unsubscribe_url})', contact: 'ann@example.com' };
    const res = await b.post('/notify/admin/preview', form);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-security-policy') ?? '', /^sandbox /);
    const html = await res.text();
    assert.match(html, /Hello Ann &lt;b&gt;bold&lt;\/b&gt;, see <a href="https:\/\/shop\.example\/sale\?a=1&amp;b=2"[^>]*>the shop<\/a>/);
    assert.doesNotMatch(html, /\/notify\/(open|click|unsubscribe)\//, 'nothing that reports back');
    assert.doesNotMatch(html, /<b>bold/);
    assert.match(html, /<html/i, 'inside the default layout');
    const plain = await b.post('/notify/admin/preview', { ...form, contact: '' });
    assert.match(await plain.text(), /Hello , see/);
    const unknown = await b.post('/notify/admin/preview', { ...form, contact: 'nobody@example.com' });
    assert.equal(unknown.status, 422);
    assert.match(await unknown.text(), /No contact &#34;nobody@example.com&#34;/);
    const broken = await b.post('/notify/admin/preview', { ...form, body: 'Hello {% if %}' });
    assert.equal(broken.status, 422);
    const html2 = await (await b.post('/notify/admin/preview', { ...form, format: 'html', body: '<p>Hi <a href="https://x.example/">x</a></p>' })).text();
    assert.match(html2, /<p>Hi <a href="https:\/\/x\.example\/"[^>]*>x<\/a><\/p>/);
    assert.equal((await b.post('/notify/admin/preview', { ...form, csrf: '' })).status, 403);
    assert.equal((await notify().campaigns.list()).length, 0, 'a preview stores no campaign');
  });

  test('the audience count is who a send would reach now: list, segment, suppressed left out', async () => {
    const count = async (form: Record<string, string>, headers: Record<string, string> = {}) => {
      const res = await b.post('/notify/admin/audience', { csrf, ...form }, headers);
      return [res.status, await res.json()] as const;
    };
    assert.deepEqual(await count({ list: 'news' }), [200, { count: 2 }]);
    assert.deepEqual(await count({ list: 'news', segment: '{"attr":"plan","eq":"pro"}' }), [200, { count: 1 }]);
    assert.deepEqual(await count({ list: '' }), [200, { count: 2 }]);
    const [s1, unknown] = await count({ list: 'nope' });
    assert.equal(s1, 404);
    assert.match(unknown.error, /nope/);
    assert.equal((await count({ segment: '{"bogus":1}' }))[0], 422);
    assert.equal((await count({ segment: '{not json' }))[0], 422);
    assert.equal((await count({ list: 'news', csrf: 'forged' }))[0], 403);
    assert.equal((await count({ list: 'news' }, { 'sec-fetch-site': 'cross-site' }))[0], 403);
  });

  test('saving needs the form token; a saved draft opens its page; HTML in every field shows as text', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    const form = { csrf, name: `N ${evil}`, subject: 'S <script>alert(1)</script>', format: 'markdown', body: `Body ${evil}`, list: 'news', segment: '', fromName: `F ${evil}`, fromEmail: '' };
    const forged = await b.post('/notify/admin/campaigns', { ...form, csrf: 'x'.repeat(43) });
    assert.equal(forged.status, 403);
    const cross = await b.post('/notify/admin/campaigns', form, { 'sec-fetch-site': 'cross-site' });
    assert.equal(cross.status, 403);
    assert.equal((await notify().campaigns.list()).length, 0, 'refused posts create nothing');

    const bad = await b.post('/notify/admin/campaigns', { ...form, list: 'missing' });
    assert.equal(bad.status, 404);
    const badHtml = await bad.text();
    assert.ok(badHtml.includes('N &lt;img src=x onerror=alert(1)&gt;'), 'the form comes back filled, escaped');
    assert.ok(!badHtml.includes(evil));

    const res = await b.post('/notify/admin/campaigns', form);
    assert.equal(res.status, 303);
    const id = /\/notify\/admin\/campaigns\/(\d+)\?done=created$/.exec(res.headers.get('location') ?? '')?.[1];
    assert.ok(id);
    const saved = await notify().campaigns.get(Number(id));
    assert.equal(saved?.status, 'draft');
    assert.equal(saved?.markdown, `Body ${evil}`);
    assert.equal(saved?.list, 'news');
    for (const path of [`/notify/admin/campaigns/${id}?done=created`, '/notify/admin']) {
      const { html } = await b.page(path);
      assert.ok(!html.includes('<script>alert') && !html.includes(evil), path);
      assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;') || html.includes('N &lt;img'), path);
    }
    assert.match((await b.page(`/notify/admin/campaigns/${id}?done=created`)).html, /Saved as a draft/);
  });
  test('tracking checkboxes start as the options say; an unchecked box is stored as off, a box left as the option follows it', async () => {
    const page = (await b.page('/notify/admin/campaigns/new')).html;
    assert.match(page, /<input type="checkbox" name="trackOpens" id="c-track-opens" checked>/);
    assert.match(page, /<input type="checkbox" name="trackClicks" id="c-track-clicks" checked>/);
    const base = { csrf, format: 'html', body: '<p>x</p>', list: '', segment: '' };
    const saved = async (subject: string, extra: Record<string, string>) => {
      const res = await b.post('/notify/admin/campaigns', { ...base, subject, ...extra });
      assert.equal(res.status, 303, subject);
      const c = (await notify().campaigns.list()).find((x) => x.subject === subject)!;
      return [c.track_opens, c.track_clicks];
    };
    assert.deepEqual(await saved('Quiet opens', { tracking: 'shown', trackClicks: 'on' }), [false, null]);
    assert.deepEqual(await saved('Quiet both', { tracking: 'shown' }), [false, false]);
    assert.deepEqual(await saved('As the options', { tracking: 'shown', trackOpens: 'on', trackClicks: 'on' }), [null, null]);
    assert.deepEqual(await saved('Old form', {}), [null, null], 'a post without the boxes changes nothing');
    // a refused save keeps what was ticked
    const refused = await b.post('/notify/admin/campaigns', { ...base, subject: '', tracking: 'shown', trackClicks: 'on' });
    assert.equal(refused.status, 422);
    const again = await refused.text();
    assert.match(again, /name="trackOpens" id="c-track-opens">/);
    assert.match(again, /name="trackClicks" id="c-track-clicks" checked>/);
  });

});

forEachEngine('console with HTTP Basic and bearer', (h) => {
  const notify = useNotify(h, { adminToken: TOKEN });
  const basic = `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}`;

  test("a browser can still use its password prompt: the basic sign-in path challenges, then goes on", async () => {
    const b = new Browser(notify);
    const challenge = await b.request('/notify/admin/sign-in/basic?next=%2Fnotify%2Fadmin%2Foutbox', { headers: PAGE });
    assert.equal(challenge.status, 401);
    assert.match(challenge.headers.get('www-authenticate') ?? '', /^Basic realm="notify admin"/);
    const through = await b.request('/notify/admin/sign-in/basic?next=%2Fnotify%2Fadmin%2Foutbox', { headers: { ...PAGE, authorization: basic } });
    assert.equal(through.status, 303);
    assert.equal(through.headers.get('location'), '/notify/admin/outbox');
    assert.equal((await b.request('/notify/admin', { headers: { ...PAGE, authorization: basic } })).status, 200);
    assert.equal((await b.request('/notify/admin', { headers: { ...PAGE, authorization: `Bearer ${TOKEN}` } })).status, 200);
    const wrong = await b.request('/notify/admin', { headers: { ...PAGE, authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401, 'a wrong header is never redirected to the form');
  });
});

forEachEngine('console import, export and sequences', (h) => {
  const notify = useNotify(h, { adminToken: TOKEN });
  const b = new Browser(notify);
  let csrf = '';
  before(async () => {
    await notify().lists.create({ name: 'news' });
    await b.signIn();
    csrf = (await b.page('/notify/admin/import')).csrf;
  });

  const upload = (csv: string | null, fields: Record<string, string> = {}, token = csrf) => {
    const form = new FormData();
    form.set('csrf', token);
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    if (csv !== null) form.set('file', new File([csv], 'people.csv', { type: 'text/csv' }));
    return b.request('/notify/admin/import', { method: 'POST', body: form });
  };

  test('an uploaded CSV is imported in the background; its page and JSON show the progress and the counts', async () => {
    assert.equal((await upload('email\nx@example.com\n', {}, 'forged')).status, 403);
    assert.equal((await notify().contacts.list()).contacts.length, 0, 'a refused upload imports nothing');
    assert.equal((await upload(null)).status, 422);
    const res = await upload('email,name\nann@example.com,Ann <b>A</b>\nnot-an-address,Bad\nbob@example.com,Bob\n', { list: 'news' });
    assert.equal(res.status, 303);
    const path = res.headers.get('location') ?? '';
    assert.match(path, /^\/notify\/admin\/imports\/[A-Za-z0-9_-]+$/);
    let job: { status: string; created: number; rejected: number; bytes_read: number; bytes_total: number } | undefined;
    for (let i = 0; i < 100 && job?.status !== 'done'; i++) {
      job = await (await b.request(`${path}.json`)).json();
      if (job?.status !== 'done') await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(job?.status, 'done');
    assert.deepEqual([job?.created, job?.rejected, job?.bytes_read === job?.bytes_total], [2, 1, true]);
    const { html } = await b.page(path);
    assert.match(html, /done: 3 rows read, 2 created, 0 updated, 0 unchanged, 1 rejected/);
    assert.match(html, /<progress id="import-progress" max="1" value="1"/);
    assert.equal((await notify().contacts.get('ann@example.com'))?.lists.join(), 'news');
    assert.equal((await b.request('/notify/admin/imports/unknown.json')).status, 404);
    assert.equal((await b.page('/notify/admin/imports/unknown')).res.status, 404);
  });

  test('the export is the contacts CSV, filtered by list; an unknown list is a 404 page', async () => {
    const res = await b.request('/notify/admin/export.csv?list=news');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const lines = (await res.text()).trim().split('\n');
    assert.match(lines[0], /^email,name,status,lists,created_at/);
    assert.deepEqual(lines.slice(1).map((l) => l.split(',')[0]).sort(), ['ann@example.com', 'bob@example.com']);
    assert.equal((await b.request('/notify/admin/export.csv?list=nope')).status, 404);
    assert.equal((await new Browser(notify).request('/notify/admin/export.csv')).status, 401, 'not without signing in');
  });

  test('sequences list their enrollments by status; a sequence page shows its steps, names as text', async () => {
    const seq = await notify().drips.createSequence({ name: 'Welcome <script>x</script>', steps: [{ delayMinutes: 0, subject: 'Hi <b>there</b>', markdown: 'a' }, { delayMinutes: 1500, subject: 'Later', html: '<p>b</p>' }] });
    await notify().drips.enroll({ contact: 'ann@example.com', sequence: seq.id });
    const list = await b.page('/notify/admin/sequences');
    assert.match(list.html, new RegExp(`<a href="/notify/admin/sequences/${seq.id}">Welcome &lt;script&gt;x&lt;/script&gt;</a>`));
    const { res, html } = await b.page(`/notify/admin/sequences/${seq.id}`);
    assert.equal(res.status, 200);
    assert.match(html, /id="enrolled-active">1</);
    assert.match(html, /<td class="wrap">Hi &lt;b&gt;there&lt;\/b&gt;<\/td><td>at once<\/td><td>at once<\/td><td>markdown<\/td>/);
    assert.match(html, /<td class="wrap">Later<\/td><td>1 d 1 h<\/td><td>1 d 1 h<\/td><td>HTML<\/td>/);
    assert.ok(!html.includes('<script>x'));
    for (const bad of ['999999', 'abc', '1e3']) assert.equal((await b.page(`/notify/admin/sequences/${bad}`)).res.status, 404, bad);
  });
});

forEachEngine('console body limits', (h) => {
  const notify = useNotify(h, { adminToken: TOKEN });

  test('an oversized sign-in or form body is a 413 before anything reads it; the session cookie is not needed to be refused', async () => {
    const big = (n: number) => new URLSearchParams({ token: 'x'.repeat(n) });
    const anon = new Browser(notify);
    assert.equal((await anon.post('/notify/admin/sign-in', Object.fromEntries(big(20 * 1024)))).status, 413);
    const b = new Browser(notify);
    await b.signIn();
    const { csrf } = await b.page('/notify/admin/campaigns/new');
    assert.equal((await b.post('/notify/admin/preview', { csrf, subject: 's', body: 'x'.repeat(9 * 1024 * 1024) })).status, 413);
    assert.equal((await b.post('/notify/admin/preview', { csrf, subject: 's', body: 'fine' })).status, 200);
  });
});
