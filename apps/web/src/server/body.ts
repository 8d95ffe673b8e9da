import { errorResponse } from "./hooks";

export type LimitedBody = { ok: true; bytes: Uint8Array; text(): string } | { ok: false; response: Response };

/**
 * A request's body, at most `maxBytes`, or a 413 response. A declared Content-Length over the limit is refused before
 * a byte is read; otherwise the stream is read chunk by chunk and cancelled as soon as the total passes the limit
 * (the header may be missing, as with chunked uploads, or lie), so nothing larger than the limit is ever buffered.
 * Node answers a request whose body was not read to the end with `Connection: close` and closes the connection
 * after the 413, so the rest of an oversized upload is never read either.
 */
export async function readBodyLimited(request: Request, maxBytes: number): Promise<LimitedBody> {
  const tooLarge = (): LimitedBody => ({ ok: false, response: errorResponse(413, "payload_too_large", `the body is larger than ${maxBytes} bytes`) });
  const declared = request.headers.get("content-length");
  if (declared !== null && !(Number(declared) <= maxBytes)) {
    await request.body?.cancel().catch(() => {});
    return tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return tooLarge();
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes, text: () => new TextDecoder().decode(bytes) };
}
