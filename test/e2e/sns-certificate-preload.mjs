// Loaded into a `notify serve` process with NODE_OPTIONS=--import <this file>, so the SES/SNS
// driver's requests to Amazon stay on this machine: fetches to the one SNS host named by
// E2E_SNS_HOST are answered here (the signing certificate from E2E_SNS_CERT_FILE, a subscription
// confirmation with 200), and each is appended to E2E_SNS_LOG for the test to read. Every other
// URL goes to the real fetch untouched.
import { appendFileSync, readFileSync } from 'node:fs';

const host = process.env.E2E_SNS_HOST;
const certificate = readFileSync(process.env.E2E_SNS_CERT_FILE, 'utf8');
const log = process.env.E2E_SNS_LOG;
const realFetch = globalThis.fetch;

globalThis.fetch = async (input, init) => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (url.hostname !== host) return realFetch(input, init);
  appendFileSync(log, `${init?.method ?? 'GET'} ${url.href}\n`);
  if (/^\/SimpleNotificationService-[A-Za-z0-9]+\.pem$/.test(url.pathname)) return new Response(certificate, { status: 200 });
  if (url.pathname === '/' && url.searchParams.get('Action') === 'ConfirmSubscription') {
    return new Response('<ConfirmSubscriptionResponse><ConfirmSubscriptionResult/></ConfirmSubscriptionResponse>', { status: 200 });
  }
  return new Response('not found', { status: 404 });
};
