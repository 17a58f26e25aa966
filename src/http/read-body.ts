/**
 * Reads a request body of at most `maxBytes`, stopping (and cancelling the stream) as soon as a
 * declared or streamed size goes over: a huge or endless body costs no more than `maxBytes` of
 * memory. Returns null when the body is too large.
 */
export async function readCapped(req: Request, maxBytes: number): Promise<Buffer | null> {
  const declared = Number(req.headers.get('content-length') ?? 0);
  if (declared > maxBytes) return null;
  if (!req.body) return Buffer.alloc(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
