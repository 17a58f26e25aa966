import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface RedisConnection {
  readonly client: Redis;
  /** `<prefix>:<name>` (the URL's `?prefix=`, default `notify`) */
  key(name: string): string;
  /**
   * Resolves once the first connection attempt has ended (at most 2 s), so the first commands wait
   * for it briefly; after that, a command never waits for a Redis that is down.
   */
  firstConnect(): Promise<void> | undefined;
  /** true once per outage: the caller logs what it does instead */
  warnOnce(): boolean;
  close(): void;
}

/**
 * `redis://host:6379/0?prefix=myapp:` (or rediss://), as the `rateLimitStore` option names it. The
 * capture rate limits and send pacing open their connection the same way.
 */
export function connectRedis(url: string, log: Logger, what: string): RedisConnection {
  const parsed = new URL(url);
  const prefix = parsed.searchParams.get('prefix') || 'notify';
  parsed.searchParams.delete('prefix');
  const client = new Redis(parsed.toString(), { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000, disconnectTimeout: 200 });
  let warned = false;
  client.on('error', (err) => {
    if (!warned) log.warn({ err: err.message }, `${what}: Redis unreachable`);
    warned = true;
  });
  client.on('ready', () => {
    warned = false;
  });
  let first: Promise<void> | undefined = new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, 2000);
    timer.unref();
    client.once('ready', done);
    client.once('error', done);
  }).then(() => {
    first = undefined;
  });
  return {
    client,
    key: (name) => `${prefix}${prefix.endsWith(':') ? '' : ':'}${name}`,
    firstConnect: () => first,
    warnOnce() {
      if (warned) return false;
      warned = true;
      return true;
    },
    close: () => client.disconnect(),
  };
}
