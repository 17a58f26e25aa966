import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { isNotifyError, type NotifyError } from '../src/errors.ts';
import { limiterStores } from '../src/http/rate-limit/registry.ts';
import type { Mailer, OutgoingMessage } from '../src/mail/contract.ts';
import { mailTransports } from '../src/mail/registry.ts';
import { createNotify } from '../src/notify.ts';
import { Registry } from '../src/registry.ts';
import { webhookDrivers } from '../src/webhooks/registry.ts';
import { freshDatabaseUrl, testOptions } from './helpers/engines.ts';

const noFile = { configFile: false as const, env: {} };

async function configError(values: Record<string, unknown>): Promise<NotifyError> {
  const err = await loadConfig(values, noFile).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isNotifyError(err, 'CONFIG_INVALID'), `expected CONFIG_INVALID for ${JSON.stringify(values)}`);
  return err;
}

test('every refused option value is CONFIG_INVALID and its message lists each registered form', async () => {
  const families = [
    { option: 'mailer', registry: mailTransports, bad: ['smtp:nope', 'smtp', 'outbox:', 'LOG', 'log:x', 'sendmail', 'smtp://a b'] },
    { option: 'webhookDriver', registry: webhookDrivers, bad: ['sparkpost', 'ses#', 'Ses', 'ses ', '#Driver', './x.js#1Driver'] },
    { option: 'rateLimitStore', registry: limiterStores, bad: ['redis', 'mem', 'redis:/x', 'memcached://h', ''] },
  ];
  for (const { option, registry, bad } of families) {
    for (const value of bad) {
      const err = await configError({ [option]: value });
      assert.equal(err.details?.option, option);
      for (const name of registry.names) assert.ok(err.message.includes(name), `${option}=${JSON.stringify(value)}: '${name}' missing from "${err.message}"`);
      assert.ok(err.message.includes(JSON.stringify(value)), 'the refused value is shown');
    }
  }
  const drivers = await configError({ webhookDriver: 'sparkpost' });
  for (const alias of ['SesSnsWebhookDriver', 'PostmarkWebhookDriver', 'SendGridWebhookDriver', 'MailgunWebhookDriver']) assert.ok(drivers.message.includes(alias));
});

test('what the registries resolve, the options accept: names, schemes, aliases and the module form', async () => {
  const accepted = {
    mailer: ['smtp://127.0.0.1:2525', 'smtps://u:p@mail.example.com', 'ses', 'outbox:./out', 'log'],
    webhookDriver: ['', 'ses', 'postmark', 'sendgrid', 'mailgun', 'SesSnsWebhookDriver', 'MailgunWebhookDriver', './hooks.js#Driver', '@acme/hooks#Driver'],
    rateLimitStore: ['memory', 'database', 'redis://127.0.0.1:6379', 'rediss://h:6380/0?prefix=app:'],
  };
  for (const [option, values] of Object.entries(accepted)) {
    for (const value of values) assert.equal((await loadConfig({ [option]: value }, noFile))[option as keyof typeof accepted], value);
  }
  assert.equal(webhookDrivers.resolve('SendGridWebhookDriver')?.name, 'sendgrid', 'a class name resolves to the built-in it names');
  assert.equal(webhookDrivers.resolve('./hooks.js#Driver')?.name, 'custom');
  assert.equal(mailTransports.resolve('smtps://h')?.name, 'smtps');
  assert.equal(limiterStores.resolve('rediss://h')?.name, 'rediss');
});

test('a transport registered once is accepted by the mailer option, named in its errors and used to send', async () => {
  const handed: OutgoingMessage[] = [];
  const memo: Mailer = {
    name: 'memo',
    async send(m) {
      handed.push(m);
      return { messageId: m.messageId };
    },
  };
  mailTransports.register('memo', { usage: 'memo:<label>', argument: /^\w+$/, create: () => memo });
  assert.match((await configError({ mailer: 'memo' })).message, /'memo:<label>'/);
  const db = freshDatabaseUrl('sqlite');
  const notify = await createNotify(testOptions(db.url, { mailer: 'memo:inbox' }));
  try {
    const record = await notify.send({ to: 'reader@example.com', subject: 'Through the registry', text: 'x' });
    assert.equal(record.status, 'sent');
    assert.deepEqual(handed.map((m) => m.subject), ['Through the registry']);
  } finally {
    await notify.close();
    db.cleanup();
  }
});

test('a registry refuses what it does not hold, naming the option; aliases need a target', () => {
  const r = new Registry<void, string>('thing').register('plain', { usage: 'plain', create: () => 'p' }).register('url', { usage: 'url://...', argument: /^\/\/\S+$/, create: (s) => s });
  assert.equal(r.create('plain'), 'p');
  assert.equal(r.create('url://x'), 'url://x');
  assert.throws(
    () => r.create('url'),
    (err) => isNotifyError(err, 'CONFIG_INVALID') && err.message === `Option 'thing' must be 'plain' or 'url://...' (got "url")` && err.details?.option === 'thing',
  );
  assert.throws(() => r.alias('Other', 'missing'), /unregistered 'missing'/);
});
