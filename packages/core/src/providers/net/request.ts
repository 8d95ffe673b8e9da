import { type Dispatcher, request } from "undici";
import type { EgressOptions } from "./egress";
import { egressDispatcher, guardedDispatcher } from "./fetch";

export interface GuardedRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The whole call, answer's body included: then it fails with an Error named TimeoutError. */
  timeoutMs: number;
  /** The caller's own stop (a step cancelled, a lease lost): the call fails with its reason. */
  signal: AbortSignal;
  /** Bytes of the answer's body kept; the rest is read and dropped (the connection stays usable). */
  keepBytes: number;
  /** The guard's settings for this call (tests); default HOLDFAST_EGRESS_ALLOW on the process's shared agent. */
  egress?: EgressOptions;
}

export interface GuardedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One HTTP request through the egress guard, with undici's `request` (about half node:http's CPU a call over a kept
 * connection; it follows no redirects). Every connection it opens is resolved and checked by the guard's agent.
 */
export async function guardedRequest(url: string, r: GuardedRequest): Promise<GuardedAnswer> {
  const own = r.egress ? egressDispatcher(r.egress) : null;
  const controller = new AbortController();
  const stop = () => controller.abort(r.signal.reason);
  if (r.signal.aborted) stop();
  else r.signal.addEventListener("abort", stop, { once: true });
  const timer = setTimeout(() => {
    const e = new Error(`no answer within ${r.timeoutMs} ms`);
    e.name = "TimeoutError";
    controller.abort(e);
  }, r.timeoutMs);
  try {
    const res = await request(url, {
      method: r.method as Dispatcher.HttpMethod,
      headers: r.headers,
      body: r.body,
      signal: controller.signal,
      dispatcher: own ?? guardedDispatcher(),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= r.keepBytes) chunks.push(chunk);
    }
    return { status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") };
  } finally {
    clearTimeout(timer);
    r.signal.removeEventListener("abort", stop);
    if (own) void own.close();
  }
}
