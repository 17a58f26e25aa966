import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCaptureFields } from '../../src/core/capture-fields.ts';
import { isNotifyError } from '../../src/errors.ts';
import { readFlash } from '../../src/http/capture/flash.ts';
import { consentSource, safeRelativePath, sameSiteReferer } from '../../src/http/capture/redirect.ts';
import { ipBucket } from '../../src/http/rate-limit/keys.ts';
import { notify_flash, notify_form, notify_form_open } from '../../src/index.ts';

const fields = (pairs: [string, string][]) => {
  const m = new Map<string, string[]>();
  for (const [k, v] of pairs) m.set(k, [...(m.get(k) ?? []), v]);
  return m;
};

test('redirect: only paths on this site pass', () => {
  for (const ok of ['/', '/thanks', '/thanks?x=1#top', '/a/b%2F%2Fc']) assert.equal(safeRelativePath(ok), ok, ok);
  const refused = [
    '//evil.com', 'https://evil.com', 'http://evil.com/x', '/\\evil.com', '\\\\evil.com', '/\\/evil.com', 'javascript:alert(1)', 'evil.com',
    'thanks', '/.//evil.com', '/x/..//evil.com', '/\tevil', '/ /evil', '/\r\nSet-Cookie:x=1', '', `/${'a'.repeat(3000)}`, ' /x',
  ];
  for (const bad of refused) assert.equal(safeRelativePath(bad), undefined, JSON.stringify(bad));
  const origins = ['http://localhost:3000'];
  assert.equal(sameSiteReferer('http://localhost:3000/signup?a=1#f', origins), '/signup?a=1');
  assert.equal(sameSiteReferer('http://evil.com/signup', origins), undefined);
  assert.equal(sameSiteReferer('http://localhost:3000//evil.com/', origins), undefined);
  assert.equal(sameSiteReferer('not a url', origins), undefined);
  assert.equal(consentSource('https://example.com/join?email=a@b.c'), 'https://example.com/join', 'no query (personal data)');
  assert.equal(consentSource('javascript:alert(1)'), 'capture');
  assert.equal(consentSource(undefined), 'capture');
});

test('IP buckets: IPv6 per /64, IPv4-mapped as IPv4, junk in one bucket', () => {
  assert.equal(ipBucket('203.0.113.9'), '203.0.113.9');
  assert.equal(ipBucket('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(ipBucket('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(ipBucket('2001:0DB8:0001:0002::9'), '2001:db8:1:2::/64');
  assert.notEqual(ipBucket('2001:db8:1:3::1'), ipBucket('2001:db8:1:2::1'));
  assert.equal(ipBucket('::ffff:203.0.113.9'), '203.0.113.9');
  assert.equal(ipBucket('::FFFF:cb00:7109'), '203.0.113.9', 'hex spelling of a mapped address');
  assert.equal(ipBucket('0:0:0:0:0:ffff:203.0.113.9'), '203.0.113.9');
  assert.equal(ipBucket('[::1]'), '0:0:0:0::/64');
  assert.equal(ipBucket('fe80::1%eth0'), 'fe80:0:0:0::/64');
  for (const junk of ['', 'unknown', 'evil.com', '1.2.3.4.5', '::ffff:999.1.1.1']) assert.equal(ipBucket(junk), 'other', junk);
});

test('capture fields: email required and valid, name one line, extra fields into attributes with limits', () => {
  const input = parseCaptureFields(
    fields([['email', ' Ann@Example.com '], ['name', 'Ann'], ['list', 'news'], ['list', 'offers'], ['plan', 'pro'], ['interests[]', 'a'], ['interests[]', 'b'], ['notify_hp', ''], ['redirect', '/x'], ['_csrf', 'tok'], ['empty', '']]),
  );
  assert.deepEqual(input, { email: 'Ann@Example.com', name: 'Ann', lists: ['news', 'offers'], attributes: { plan: 'pro', interests: ['a', 'b'] } });
  const rejects = (pairs: [string, string][], code: string, field: string) =>
    assert.throws(() => parseCaptureFields(fields(pairs)), (e) => isNotifyError(e) && e.code === code && e.details?.field === field, JSON.stringify(pairs).slice(0, 80));
  rejects([], 'INVALID_EMAIL', 'email');
  rejects([['email', 'nope']], 'INVALID_EMAIL', 'email');
  rejects([['email', 'a@example.com\r\nBcc: x@example.com']], 'INVALID_EMAIL', 'email');
  rejects([['email', 'a@example.com'], ['email', 'b@example.com']], 'INVALID_INPUT', 'email');
  rejects([['email', 'a@example.com'], ['name', 'Ann\r\nBcc: x@example.com']], 'INVALID_INPUT', 'name');
  rejects([['email', 'a@example.com'], ['name', 'x'.repeat(201)]], 'INVALID_INPUT', 'name');
  rejects([['email', 'a@example.com'], ['list', '<script>']], 'INVALID_INPUT', 'list');
  rejects([['email', 'a@example.com'], ...Array.from({ length: 11 }, (_, i) => ['list', `l${i}`] as [string, string])], 'INVALID_INPUT', 'list');
  rejects([['email', 'a@example.com'], ['bio', 'x'.repeat(1001)]], 'INVALID_INPUT', 'bio');
  rejects([['email', 'a@example.com'], ['__proto__', 'x']], 'INVALID_INPUT', '__proto__');
  rejects([['email', 'a@example.com'], ['a b', 'x']], 'INVALID_INPUT', 'a b');
  rejects([['email', 'a@example.com'], ...Array.from({ length: 21 }, () => ['tag', 'x'] as [string, string])], 'INVALID_INPUT', 'tag');
  rejects([['email', 'a@example.com'], ...Array.from({ length: 40 }, (_, i) => [`f${i}`, 'x'] as [string, string])], 'INVALID_INPUT', '*');
});

test('notify_form: escaped attributes, honeypot per option/config, list choice, relative redirect only', () => {
  const html = notify_form({
    list: 'news"><script>',
    lists: ['a&b', { name: 'offers', label: '<b>Offers</b>', checked: true }],
    redirect: '/thanks?a=1&b="2"',
    attributes: { id: 'signup', 'data-x': '"><img src=x onerror=alert(1)>' },
    hidden: { source: '<footer>' },
    csrf: { name: '_csrf', value: 'abc"def' },
    name: 'Your name',
    submitLabel: 'Join <now>',
  });
  assert.match(html, /^<form method="post" action="\/notify\/capture" accept-charset="UTF-8" id="signup" data-x="&#34;&#62;&#60;img src=x onerror=alert\(1\)&#62;" class="notify-form">/);
  assert.doesNotMatch(html, /<script>|<img|<b>|<footer>/);
  assert.match(html, /name="notify_hp" value="" tabindex="-1"/);
  assert.match(html, /<input type="hidden" name="list" value="news&#34;&#62;&#60;script&#62;">/);
  assert.match(html, /<input type="checkbox" name="list" value="a&#38;b"> a&#38;b<\/label>/);
  assert.match(html, /<input type="checkbox" name="list" value="offers" checked> &#60;b&#62;Offers&#60;\/b&#62;/);
  assert.match(html, /name="redirect" value="\/thanks\?a=1&#38;b=&#34;2&#34;"/);
  assert.match(html, /name="_csrf" value="abc&#34;def"/);
  assert.match(html, /name="source" value="&#60;footer&#62;"/);
  assert.match(html, /<input type="text" name="name"/);
  assert.match(html, /<input type="email" name="email"[^>]*required/);
  assert.match(html, /Join &#60;now&#62;<\/button>\n<\/form>$/);
  assert.doesNotMatch(notify_form({ honeypot: false }), /notify_hp/);
  assert.doesNotMatch(notify_form_open({ config: { honeypot: false } }), /notify_hp/);
  assert.match(notify_form_open({ config: { honeypot: true } }), /notify_hp/);
  assert.doesNotMatch(notify_form_open(), /<\/form>/, 'open leaves the form open');
  for (const redirect of ['//evil.com', 'https://evil.com', '/\\evil.com']) assert.throws(() => notify_form({ redirect }), (e) => isNotifyError(e, 'INVALID_INPUT'));
  assert.throws(() => notify_form({ attributes: { action: 'https://evil.com' } }), (e) => isNotifyError(e, 'INVALID_INPUT'));
  assert.throws(() => notify_form({ attributes: { 'x"y': '1' } }), (e) => isNotifyError(e, 'INVALID_INPUT'));
});

test('flash: read back from a Request, node headers or a cookie string; escaped in the form; junk ignored', () => {
  const cookie = `a=1; notify_errors=${encodeURIComponent(JSON.stringify(['Bad <email>']))}; notify_success=${encodeURIComponent('["ok"]')}`;
  const expected = { errors: ['Bad <email>'], success: ['ok'] };
  assert.deepEqual(readFlash(cookie), expected);
  const fromRequest = notify_flash(new Request('http://x/', { headers: { cookie } }));
  assert.deepEqual({ errors: fromRequest.errors, success: fromRequest.success }, expected);
  assert.deepEqual(fromRequest.clear, ['notify_errors=; Path=/; Max-Age=0; SameSite=Lax', 'notify_success=; Path=/; Max-Age=0; SameSite=Lax']);
  const fromNode = notify_flash({ headers: { cookie } });
  assert.deepEqual(fromNode.errors, expected.errors);
  assert.deepEqual(notify_flash(undefined).errors, []);
  for (const junk of ['notify_errors=%E0%A4%A', 'notify_errors={"a":1}', 'notify_errors=[1,2]', 'notify_errors=']) assert.deepEqual(readFlash(junk).errors, [], junk);
  const html = notify_form({ flash: cookie });
  assert.match(html, /<div class="notify-flash notify-errors" role="alert"><p>Bad &#60;email&#62;<\/p><\/div>/);
  assert.match(html, /<div class="notify-flash notify-success" role="status"><p>ok<\/p><\/div>/);
});
