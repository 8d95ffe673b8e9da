import { Agent, request } from "undici";

// The same call a Holdfast `http_request` step makes (providers/effects/http-request.ts through providers/net/request.ts):
// undici's request over a kept-alive agent, POST with a JSON body and an Idempotency-Key, the answer read and parsed,
// anything but 2xx an error. (The peers have no egress guard: theirs is a plain agent.)
const agent = new Agent();

export async function httpCall(url: string, idempotencyKey: string): Promise<unknown> {
  const res = await request(url, {
    method: "POST",
    dispatcher: agent,
    headers: { "Idempotency-Key": idempotencyKey, "Content-Type": "application/json" },
    body: "{}",
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`POST ${url} answered ${res.statusCode}`);
  return { status: res.statusCode, body: JSON.parse(text) };
}
