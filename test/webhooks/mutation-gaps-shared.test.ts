import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { isNotifyError } from '../../src/errors.ts';
import { PostmarkWebhookDriver } from '../../src/index.ts';
import { createNotify, type CreateNotifyOptions, type Notify } from '../../src/notify.ts';
import { forEachEngine, freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { TEST_TOPIC, webhookRequest } from './helpers.ts';

/*
 * The driver loading, event checking and request reading shared by every webhook driver: what a
 * mutation run of src/webhooks/ found no test for (`npm run test:mutation -- webhooks`).
 */

const post = (n: Notify, body: string, headers: Record<string, string> = {}) => call(n, '/notify/webhook', { method: 'POST', body, headers });

/** A driver object that accepts everything and answers parseEvents with `events`. */
const objectDriver = (events: unknown[] = []) => ({
  verifySignature: () => true,
  isSubscriptionConfirmation: () => false,
  confirmSubscription: () => {},
  parseEvents: () => events,
});

async function withNotify<T>(url: string, extra: CreateNotifyOptions, fn: (n: Notify) => Promise<T>): Promise<T> {
  const notify = await createNotify(testOptions(url, extra));
  try {
    return await fn(notify);
  } finally {
    await notify.close();
  }
}

forEachEngine('custom webhook drivers: event shapes and receipt names', (h) => {
  test('events of the wrong shape are dropped, the rest applied', async () => {
    const good = (email: string, id?: string) => ({ type: 'bounce', email, message_id: '', ...(id ? { id } : {}) });
    const events = ['bounce', { ...good('x1@example.com'), email: 5 }, { ...good('x2@example.com'), message_id: 7 }, { ...good('x3@example.com'), id: 9 }, { ...good('x4@example.com'), id: null }, good('ok1@example.com'), good('ok2@example.com', 'shape-2')];
    await withNotify(h.url, { webhookDriver: objectDriver(events) as never }, async (n) => {
      const res = await post(n, 'shapes');
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { received: 2, applied: 0, duplicates: 0, unknownContacts: 2 });
    });
  });

  test('receipts are keyed by the driver name: its own, else its class, else custom', async () => {
    class AcmeDriver {
      verifySignature = () => true;
      isSubscriptionConfirmation = () => false;
      confirmSubscription = () => {};
      parseEvents = (r: { text: string }) => [{ type: 'soft_bounce', email: 'names@example.com', message_id: '', id: r.text }];
    }
    const nameless = Object.assign(Object.create(null), new AcmeDriver());
    const variants: [string, unknown][] = [
      ['acme-by-name', Object.assign(new AcmeDriver(), { name: 'acme-by-name' })],
      ['AcmeDriver', new AcmeDriver()],
      ['custom', { ...new AcmeDriver() }],
      ['custom', Object.assign({ ...new AcmeDriver() }, { name: 42 })],
      ['custom', Object.assign({ ...new AcmeDriver() }, { name: '' })],
      ['custom', nameless],
    ];
    for (const [i, [name, driver]] of variants.entries()) {
      await withNotify(h.url, { webhookDriver: driver as never }, async (n) => {
        assert.equal((await post(n, `names-${i}`)).status, 200);
        const rows = await n.context.store.db.selectFrom('notify_webhook_receipts').select('provider').where('message_id', '=', `names-${i}`).execute();
        assert.deepEqual(
          rows.map((r) => r.provider),
          [name],
          `variant ${i}`,
        );
      });
    }
  });
});

describe('custom webhook drivers from modules', () => {
  const db = freshDatabaseUrl('sqlite');
  const app = mkdtempSync(join(tmpdir(), 'notify-app-'));
  after(() => {
    db.cleanup();
    rmSync(app, { recursive: true, force: true });
  });
  const DRIVER = `{
    verifySignature() { return true; },
    isSubscriptionConfirmation() { return false; },
    confirmSubscription() {},
    parseEvents() { return []; },
  }`;
  const asClass = DRIVER.replace(/},/g, '}');
  writeFileSync(join(app, 'drivers.mjs'), `export class Good ${asClass}\nexport const asObject = ${DRIVER};\nexport class Bad { constructor() { throw new Error('boom'); } }\nexport const nothing = null;\n`);
  // An application's own package: resolved from the application's folder (cwd), not from notify's.
  mkdirSync(join(app, 'node_modules', 'acme-notify-driver'), { recursive: true });
  writeFileSync(join(app, 'node_modules', 'acme-notify-driver', 'package.json'), JSON.stringify({ name: 'acme-notify-driver', type: 'module', exports: './index.mjs' }));
  writeFileSync(join(app, 'node_modules', 'acme-notify-driver', 'index.mjs'), `export class AcmeDriver ${asClass}\n`);
  const open = (webhookDriver: string) => createNotify(testOptions(db.url, { webhookDriver, cwd: app }));

  test('a class, an object export and a package of the application all load', async () => {
    for (const spec of ['./drivers.mjs#Good', './drivers.mjs#asObject', 'acme-notify-driver#AcmeDriver', `${join(app, 'drivers.mjs')}#Good`]) {
      const notify = await open(spec);
      try {
        assert.equal((await post(notify, '[]')).status, 200, spec);
      } finally {
        await notify.close();
      }
    }
  });

  const refusals: [string, RegExp][] = [
    ['./missing.mjs#Good', /^Option 'webhookDriver' \('\.\/missing\.mjs#Good'\): could not load the module: /],
    ['acme-missing-driver#X', /could not load the module: .*Cannot find package 'acme-missing-driver'/],
    ['./drivers.mjs#Nope', /: the module has no export 'Nope'$/],
    ['./drivers.mjs#Bad', /: constructing Bad failed: boom$/],
    ['./drivers.mjs#nothing', /^Option 'webhookDriver': nothing is not a WebhookDriverInterface \(missing verifySignature, isSubscriptionConfirmation, confirmSubscription, parseEvents\)$/],
  ];
  for (const [spec, message] of refusals) {
    test(`${spec}: CONFIG_INVALID naming the option`, async () => {
      await assert.rejects(open(spec), (err: unknown) => {
        assert.ok(isNotifyError(err, 'CONFIG_INVALID'), String(err));
        assert.deepEqual(err.details, { option: 'webhookDriver' });
        assert.match(err.message, message);
        return true;
      });
    });
  }

  test("the module's or the constructor's own error is kept as the cause, for the application's logs", async () => {
    await assert.rejects(open('./missing.mjs#Good'), (err: unknown) => {
      assert.ok(isNotifyError(err, 'CONFIG_INVALID'));
      assert.equal((err.cause as NodeJS.ErrnoException | undefined)?.code, 'ERR_MODULE_NOT_FOUND');
      return true;
    });
    await assert.rejects(open('./drivers.mjs#Bad'), (err: unknown) => {
      assert.ok(isNotifyError(err, 'CONFIG_INVALID'));
      assert.equal((err.cause as Error | undefined)?.message, 'boom');
      return true;
    });
  });

  test('a driver object without the methods is CONFIG_INVALID naming what it is', async () => {
    await assert.rejects(createNotify(testOptions(db.url, { webhookDriver: { verifySignature: () => true } as never })), (err: unknown) => {
      assert.ok(isNotifyError(err, 'CONFIG_INVALID'));
      assert.equal(err.details?.option, 'webhookDriver');
      assert.equal(err.message, "Option 'webhookDriver': the driver object is not a WebhookDriverInterface (missing isSubscriptionConfirmation, confirmSubscription, parseEvents)");
      return true;
    });
  });
});

describe('the SES driver tells the log', () => {
  const db = freshDatabaseUrl('sqlite');
  after(() => db.cleanup());
  const logged = async (extra: CreateNotifyOptions, fn: (n: Notify) => Promise<unknown> = async () => {}) => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'warn' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    await withNotify(db.url, { webhookDriver: 'ses', logger, ...extra }, fn);
    return lines.map(({ level, msg, reason }) => ({ level, msg, ...(reason ? { reason } : {}) }));
  };

  test('without snsTopicArns: one warning that any topic is accepted; with them: none', async () => {
    assert.deepEqual(await logged({}), [{ level: 40, msg: "webhookDriver 'ses' without snsTopicArns accepts (and confirms) any SNS topic: list your topic ARNs in snsTopicArns" }]);
    assert.deepEqual(await logged({ snsTopicArns: [TEST_TOPIC] }), []);
  });

  test('a refused message is logged with the reason', async () => {
    const lines = await logged({ snsTopicArns: [TEST_TOPIC] }, async (n) => assert.equal((await post(n, '{}')).status, 403));
    assert.deepEqual(lines[0], { level: 40, msg: 'SNS webhook refused', reason: 'not a signed SNS message' });
  });
});

describe('what every driver reads from a request', () => {
  const driver = new PostmarkWebhookDriver({ username: 'hook', password: 'pa55' });
  const parse = (fields: object) => driver.parseEvents(webhookRequest(JSON.stringify({ RecordType: 'Bounce', ID: 1, Type: 'HardBounce', MessageID: 'm', Email: 'john@example.com', ...fields })));

  test('addresses: a display name and spaces around are dropped; anything after the brackets makes it no address', () => {
    assert.equal(parse({ Email: 'John <john@example.com>  ' })[0]?.email, 'john@example.com');
    assert.equal(parse({ Email: '  john@example.com ' })[0]?.email, 'john@example.com');
    assert.deepEqual(parse({ Email: 'John <john@example.com> x' }), []);
  });

  test('a field of the wrong type counts as missing', () => {
    assert.equal(parse({ MessageID: 12345 })[0]?.message_id, '');
  });

  test('a web Request: the caller may read it between the driver calls', async () => {
    const body = JSON.stringify({ RecordType: 'Bounce', ID: 2, Type: 'HardBounce', MessageID: 'm', Email: 'john@example.com' });
    const req = new Request('http://localhost/notify/webhook', { method: 'POST', body, headers: { authorization: `Basic ${Buffer.from('hook:pa55').toString('base64')}` } });
    assert.equal(await driver.verifySignature(req), true);
    assert.equal(await req.text(), body);
    assert.deepEqual(await driver.parseEvents(req), [{ type: 'bounce', email: 'john@example.com', message_id: 'm', id: 'Bounce:2' }]);
  });

  test('a web Request whose body fails to arrive reads as empty: no events, nothing thrown', async () => {
    const broken = new ReadableStream({ pull: (c) => c.error(new Error('connection reset')) });
    const req = new Request('http://localhost/notify/webhook', { method: 'POST', body: broken, duplex: 'half' } as RequestInit);
    assert.deepEqual(await driver.parseEvents(req), []);
  });
});
