import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP server standing in for a provider: it counts calls per Idempotency-Key and, like a provider that
 * honours the key, answers a repeated key with the first result instead of acting again.
 */
export interface HttpTarget {
  url: string;
  /** Calls received per Idempotency-Key (repeats included). */
  calls: Map<string, number>;
  /** Distinct keys acted on: the effects a customer would see. */
  effects(): number;
  /** The most calls with one key that were being processed at the same time (1 = never overlapped). */
  maxConcurrent(key: string): number;
  /** How to answer the next calls: delay, or a status for the first n calls of each key. */
  behave(b: Partial<TargetBehaviour>): void;
  close(): Promise<void>;
}

export interface TargetBehaviour {
  delayMs: number;
  /** Delay only the first call of each key (so a retry is fast). */
  delayFirstOnly: boolean;
  failFirst: number;
  failStatus: number;
  retryAfter?: string;
}

export async function startHttpTarget(port = 0): Promise<HttpTarget> {
  const calls = new Map<string, number>();
  const results = new Map<string, string>();
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  let behaviour: TargetBehaviour = { delayMs: 0, delayFirstOnly: false, failFirst: 0, failStatus: 503 };
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const body = await new Promise<string>((resolve) => {
      let data = "";
      req.on("data", (c) => (data += c));
      req.on("end", () => resolve(data));
    });
    const key = String(req.headers["idempotency-key"] ?? "none");
    const n = (calls.get(key) ?? 0) + 1;
    calls.set(key, n);
    const now = (inFlight.get(key) ?? 0) + 1;
    inFlight.set(key, now);
    maxInFlight.set(key, Math.max(maxInFlight.get(key) ?? 0, now));
    res.on("close", () => inFlight.set(key, (inFlight.get(key) ?? 1) - 1));
    if (behaviour.delayMs && (!behaviour.delayFirstOnly || n === 1)) await new Promise((r) => setTimeout(r, behaviour.delayMs));
    if (n <= behaviour.failFirst) {
      res.writeHead(behaviour.failStatus, behaviour.retryAfter ? { "retry-after": behaviour.retryAfter } : {});
      res.end("try later");
      return;
    }
    let result = results.get(key);
    if (!result) {
      result = JSON.stringify({ ok: true, key, received: body ? JSON.parse(body) : null, effect: results.size + 1 });
      results.set(key, result);
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(result);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/effect`,
    calls,
    effects: () => results.size,
    maxConcurrent: (key) => maxInFlight.get(key) ?? 0,
    behave: (b) => (behaviour = { ...behaviour, ...b }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
