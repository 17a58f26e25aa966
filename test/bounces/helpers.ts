import { readFileSync } from 'node:fs';
import pino, { type Logger } from 'pino';

export const BOUNCE_DOMAIN = 'bounce.test';

/** A fixture's bytes (sources and adaptations: fixtures/README.md). */
export function fixture(name: string): Buffer {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
}

/**
 * Each real report, the token its VERP address carries (adapted into the fixture) and the address
 * the send went to (the recipient the report names, kept as the MTA wrote it).
 */
export const REAL_REPORTS = [
  { file: 'postfix-over-quota.eml', mta: 'Postfix', token: 'pfxBboxToken0000000001', to: 'recipient@domain.com', type: 'bounce' },
  { file: 'exim-failed.eml', mta: 'Exim', token: 'eximTestToken000000001', to: 'page+userx@test.ex', type: 'bounce' },
  { file: 'exchange-2007-unknown-recipient.eml', mta: 'Microsoft Exchange', token: 'msExchangeToken0000001', to: 'email_that_does_not_exists_this_is_just_a_test@gmail.com', type: 'bounce' },
  { file: 'gmail-rejected.eml', mta: 'Gmail', token: 'gmailGsuiteToken000001', to: 'kijitora@example.com', type: 'bounce' },
  { file: 'rfc3464-three-recipients.eml', mta: 'RFC 3464 example', token: 'rfc3464Example2Tok0001', to: 'wsnell@sdcc13.ucsd.edu', type: 'bounce' },
  { file: 'arf-yahoo-abuse.eml', mta: 'Yahoo feedback loop', token: 'yahooArfToken000000001', to: 'user@yahoo.com', type: 'complaint' },
  { file: 'arf-rfc5965-example.eml', mta: 'RFC 5965 example', token: 'rfc5965ExampleTok00001', to: 'user@example.com', type: 'complaint' },
] as const;

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A real pino logger writing into an array, so tests read what an operator would read. */
export function memoryLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as LogLine) });
  return { log, lines };
}
