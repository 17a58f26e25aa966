import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SesSnsWebhookDriver } from '../../src/index.ts';
import { fakeFetch, sesBounce, signedSns, TEST_CERT, TEST_EC_CERT, TEST_EC_KEY, TEST_NOW, TEST_REGION, TEST_TOPIC, webhookRequest } from './helpers.ts';

/**
 * SNS signs with RSA only (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA). A certificate at a trusted SNS
 * URL that holds another kind of key is refused before the signature is checked: node would verify an ECDSA
 * signature against a P-256 certificate under the same digest name, so without that check a message signed
 * with such a key would pass.
 */
const CERT_URL = `https://sns.${TEST_REGION}.amazonaws.com/SimpleNotificationService-0000000000000000ec.pem`;

function driver(cert: string) {
  const reasons: string[] = [];
  const d = new SesSnsWebhookDriver({ topicArns: [TEST_TOPIC], fetch: fakeFetch({ [CERT_URL]: cert }).fetch, now: () => new Date(TEST_NOW), onReject: (r) => reasons.push(r) });
  return { d, reasons };
}

/** A bounce notification signed with `key` whose SigningCertURL is CERT_URL (the CERT_URL is not part of what is signed). */
const bounce = (key?: string) => JSON.stringify({ ...signedSns({ Type: 'Notification', Message: sesBounce('Permanent', ['a@example.com']) }, '2', key), SigningCertURL: CERT_URL });

test('a message signed with an EC key whose certificate SNS serves is refused: not an RSA key', async () => {
  const { d, reasons } = driver(TEST_EC_CERT);
  assert.equal(await d.verifySignature(webhookRequest(bounce(TEST_EC_KEY))), false);
  assert.deepEqual(reasons, ['signing certificate does not hold an RSA key']);
});

test('the same message signed with the RSA test key, its certificate at that CERT_URL: verified', async () => {
  const { d, reasons } = driver(TEST_CERT);
  assert.equal(await d.verifySignature(webhookRequest(bounce())), true);
  assert.deepEqual(reasons, []);
});
