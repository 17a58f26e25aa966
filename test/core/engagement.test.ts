import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyEngagement, type EngagementInput } from '../../src/core/engagement.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';
const base: EngagementInput = { type: 'open', method: 'GET', userAgent: CHROME, at: 100_000, sentAt: 0 };

test('engagement classifier: human by default, machine with a reason for known signals', () => {
  const cases: [Partial<EngagementInput>, string | null][] = [
    [{}, null],
    [{ method: 'HEAD' }, 'head_request'],
    [{ userAgent: '' }, 'no_user_agent'],
    [{ userAgent: 'Mozilla/5.0' }, 'apple_mail_privacy'],
    [{ userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' }, 'google_image_proxy'],
    [{ userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' }, 'bot_user_agent'],
    [{ userAgent: 'python-requests/2.31.0' }, 'bot_user_agent'],
    [{ userAgent: 'curl/8.5.0' }, 'bot_user_agent'],
    [{ userAgent: 'Mozilla/5.0 (Linux; Android 9; CUBOT X19) AppleWebKit/537.36 Chrome/120 Mobile' }, null],
    [{ type: 'click', at: 4_000, sentAt: 0 }, 'too_soon_after_delivery'],
    [{ type: 'click', at: 5_000, sentAt: 0 }, null],
    [{ type: 'click', at: 1_000, sentAt: null }, null],
    [{ type: 'open', at: 1_000, sentAt: 0 }, null],
  ];
  for (const [input, reason] of cases) {
    const label = classifyEngagement({ ...base, ...input });
    assert.deepEqual(label, { isMachine: reason !== null, reason }, JSON.stringify(input));
  }
});
