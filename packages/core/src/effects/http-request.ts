import type { StepOutcome } from "../steps/retry";
import { parseRetryAfter } from "../steps/retry";
import type { HttpRequestConfig } from "../versions/graph";

const maxBodyChars = 64 * 1024;

export interface HttpRequestInput {
  config: HttpRequestConfig;
  idempotencyKey: string;
  runId: string;
  input: unknown;
  signal: AbortSignal;
}

/**
 * A real HTTP call. At least once: a retry after a crash repeats the call with the same Idempotency-Key, which a
 * well-behaved receiver uses to return the first result instead of acting twice.
 */
export async function performHttpRequest({ config, idempotencyKey, runId, input, signal }: HttpRequestInput): Promise<StepOutcome> {
  const hasBody = config.method !== "GET" && (config.body !== undefined || config.sendInput);
  const body = config.sendInput ? { input, body: config.body ?? null } : config.body;
  let response: Response;
  try {
    response = await fetch(config.url, {
      method: config.method,
      headers: {
        ...config.headers,
        "Idempotency-Key": idempotencyKey,
        "Holdfast-Run-Id": runId,
        ...(hasBody ? { "Content-Type": "application/json" } : {}),
      },
      body: hasBody ? JSON.stringify(body) : undefined,
      signal: AbortSignal.any([signal, AbortSignal.timeout(config.timeoutMs)]),
      redirect: "follow",
    });
  } catch (error) {
    const e = error as Error;
    const timedOut = e.name === "TimeoutError";
    return { kind: "retry", error: { code: timedOut ? "timeout" : "network", message: String(e.cause ?? e.message) } };
  }
  const text = await response.text().catch(() => "");
  const output = { status: response.status, body: parseBody(text, response.headers.get("content-type")) };
  if (response.ok) return { kind: "done", output };

  const error = { code: `http_${response.status}`, message: `${config.method} ${config.url} answered ${response.status}`, status: response.status };
  if (response.status === 429 || response.status === 408 || response.status === 425 || response.status >= 500) {
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), response.headers.get("date"), Date.now());
    return { kind: "retry", error, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  return { kind: "fail", error: { ...error, permanent: true, authorisation: response.status === 401 || response.status === 403 } };
}

function parseBody(text: string, contentType: string | null): unknown {
  const clipped = text.length > maxBodyChars ? text.slice(0, maxBodyChars) : text;
  if (contentType?.includes("json") && clipped === text) {
    try {
      return JSON.parse(text);
    } catch {
      return clipped;
    }
  }
  return clipped;
}
