import { after, afterEach, before, beforeEach } from 'node:test';
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp-sink.ts';
import { freshPgSchema } from './pg.ts';
import { CliEnv } from './processes.ts';

export interface CliRig {
  /** the in-process SMTP sink, emptied before each test */
  readonly sink: SmtpSink;
  /** a fresh PostgreSQL schema per test, dropped after it */
  readonly db: ReturnType<typeof freshPgSchema>;
  /** a CLI environment sending to the sink (database: the test's schema unless given), cleaned up after the test */
  cliFor(extra?: Record<string, unknown>, database?: string): CliEnv;
}

/** Registers the hooks of a describe block whose tests run notify commands as real processes. */
export function useCliRig(): CliRig {
  let sink: SmtpSink | undefined;
  let db: ReturnType<typeof freshPgSchema> | undefined;
  const envs: CliEnv[] = [];
  before(async () => {
    sink = await startSmtpSink({ parse: false });
  });
  after(() => sink?.close());
  beforeEach(() => {
    sink!.messages.length = 0;
    db = freshPgSchema();
  });
  afterEach(async () => {
    for (const e of envs.splice(0)) e.cleanup();
    await db?.drop();
  });
  return {
    get sink() {
      return sink!;
    },
    get db() {
      return db!;
    },
    cliFor(extra = {}, database = db!.url) {
      const env = new CliEnv({ database, mailer: sink!.url, fromEmail: 'news@example.com', baseUrl: 'http://127.0.0.1', ...extra });
      envs.push(env);
      return env;
    },
  };
}
