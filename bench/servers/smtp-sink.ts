import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { ready } from '../lib/child.ts';

/**
 * A light SMTP sink in its own process (the in-process test sink parses every message; this one
 * only counts), so the sender being measured does not share an event loop with its receiver.
 * GET /stats on the control port: { messages, recipients, duplicates }; GET /times: the arrival
 * time (epoch ms) of every message since the last reset; POST /reset clears.
 */
let messages = 0;
let times: number[] = [];
let seen = new Map<string, number>();
let duplicates = 0;

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  // a reverse DNS lookup per connection would dominate every loopback measurement
  disableReverseLookup: true,
  size: 30 * 1024 * 1024,
  onData(stream, session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      messages++;
      times.push(Date.now());
      for (const r of session.envelope.rcptTo) {
        const n = (seen.get(r.address) ?? 0) + 1;
        if (n > 1) duplicates++;
        seen.set(r.address, n);
      }
      callback();
    });
  },
});

const control = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/reset') {
    messages = 0;
    duplicates = 0;
    seen = new Map();
    times = [];
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(req.url === '/times' ? times : { messages, recipients: seen.size, duplicates }));
});

// Replies are small writes: without this, Nagle + delayed ACK add ~40 ms to some of them.
smtp.server.on('connection', (socket) => socket.setNoDelay(true));

smtp.listen(0, '127.0.0.1', () => {
  control.listen(0, '127.0.0.1', () => {
    ready({ port: (smtp.server.address() as AddressInfo).port, control: (control.address() as AddressInfo).port });
  });
});
process.on('SIGTERM', () => process.exit(0));
