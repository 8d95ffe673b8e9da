import { Agent, request } from "node:http";

// The same call a Holdfast `http_request` step makes (providers/effects/http-request.ts): node:http over a keep-alive agent,
// POST with a JSON body and an Idempotency-Key, the answer read and parsed, anything but 2xx an error.
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

export function httpCall(url: string, idempotencyKey: string): Promise<unknown> {
  const body = "{}";
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: { "Idempotency-Key": idempotencyKey, "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) },
        signal: AbortSignal.timeout(10_000),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) return reject(new Error(`POST ${url} answered ${status}`));
          resolve({ status, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
