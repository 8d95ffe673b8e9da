import { httpRequestBody } from "../../versions/kinds/http_request";
import { type EgressOptions, egressRefusalOf, egressStepError } from "../net/egress";
import { type GuardedAnswer, guardedRequest } from "../net/request";
import { failedOutcomeCode, traceProviderCall } from "../../base/tracing";
import type { StepOutcome } from "../../base/outcome/outcome";
import { parseRetryAfter } from "../../base/outcome/retry-after";
import type { HttpRequestConfig } from "../../versions/graph";

const maxBodyChars = 64 * 1024;

export interface HttpRequestInput {
  config: HttpRequestConfig;
  idempotencyKey: string;
  runId: string;
  input: unknown;
  signal: AbortSignal;
  /** The egress guard's settings for this call (tests); default HOLDFAST_EGRESS_ALLOW, on the process's shared agent. */
  egress?: EgressOptions;
  /** A connection's credential header (an HTTP API connection): replaces a plain header of the same name. */
  credential?: { header: string; value: string };
  /** Who the call is to, for its trace span: http (an http_request step), crm, model. */
  provider?: "http" | "crm" | "model";
  /**
   * A test run's stand-in for the network (run/connectors/simulate.ts): the request is recorded as it would be sent and
   * answered with the tester's choice; no connection is made. The answer is classified exactly as a real one.
   */
  simulated?: SimulatedCall;
}

/** What a simulated call records and answers. */
export interface SimulatedCall {
  answer: { status: number; body?: unknown };
  /** Header values to hide in the record (the connection's secret). */
  secrets: string[];
  record(request: RecordedRequest): void;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

const secretHeaders = new Set(["authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"]);

/** A test run: nothing leaves the process. The request is recorded as it would be sent; the tester's answer comes back. */
function simulatedAnswer(simulated: SimulatedCall, request: RecordedRequest): GuardedAnswer {
  simulated.record(request);
  return { status: simulated.answer.status, headers: { "content-type": "application/json" }, text: JSON.stringify(simulated.answer.body ?? {}) };
}

/** The request as a record a person may read: credentials hidden, however they were named. */
function recordOf(method: string, url: string, headers: Record<string, string>, body: string | undefined, secrets: string[]): RecordedRequest {
  const hidden = (name: string, value: string) => secretHeaders.has(name.toLowerCase()) || secrets.some((s) => s !== "" && value.includes(s));
  let parsed: unknown = body ?? null;
  try {
    parsed = body === undefined ? null : JSON.parse(body);
  } catch {
    // sent as text
  }
  return { method, url, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, hidden(k, v) ? "•••• (hidden)" : v])), body: parsed };
}

/**
 * A real HTTP call. At least once: a retry after a crash repeats the call with the same Idempotency-Key, which a
 * well-behaved receiver uses to return the first result instead of acting twice.
 */
export function performHttpRequest(request: HttpRequestInput): Promise<StepOutcome> {
  const { config, idempotencyKey, runId } = request;
  return traceProviderCall(
    { provider: request.provider ?? "http", operation: config.method, runId, effectKey: idempotencyKey, attributes: urlAttributes(config.method, config.url) },
    async (span) => {
      const outcome = await httpCall(request);
      const status = outcome.kind === "done" ? (outcome.output as { status?: number }).status : (outcome as { error?: { status?: unknown } }).error?.status;
      if (typeof status === "number") span?.setAttribute("http.response.status_code", status);
      return outcome;
    },
    failedOutcomeCode,
  );
}

/** Where the call went, for its span: no query string and no credentials (they may carry secrets). */
function urlAttributes(method: string, url: string): Record<string, string | number> {
  const u = URL.parse(url);
  if (!u) return { "http.request.method": method };
  return {
    "http.request.method": method,
    "server.address": u.hostname,
    "server.port": Number(u.port) || (u.protocol === "https:" ? 443 : 80),
    "url.full": `${u.protocol}//${u.host}${u.pathname}`,
  };
}

async function httpCall({ config, idempotencyKey, runId, input, signal, egress, credential, simulated }: HttpRequestInput): Promise<StepOutcome> {
  const { hasBody, body } = httpRequestBody(config, input);
  let response: GuardedAnswer;
  const { url, basic } = withoutUserinfo(config.url);
  const headers = headerSet(
    basic ? { Authorization: basic } : {},
    config.headers,
    credential ? { [credential.header]: credential.value } : {},
    { "Idempotency-Key": idempotencyKey, "Holdfast-Run-Id": runId, ...(hasBody ? { "Content-Type": "application/json" } : {}) },
  );
  const text = hasBody ? JSON.stringify(body) : undefined;
  try {
    response = simulated
      ? simulatedAnswer(simulated, recordOf(config.method, config.url, headers, text, [...simulated.secrets, ...(credential ? [credential.value] : [])]))
      : await guardedRequest(url, { method: config.method, headers, body: text, timeoutMs: config.timeoutMs, signal, keepBytes: maxBodyChars * 4, egress });
  } catch (error) {
    // A destination the egress guard refuses stays refused: a permanent failure, and nothing was sent.
    const refused = egressRefusalOf(error);
    if (refused) return { kind: "fail", error: egressStepError(refused) };
    const e = error as Error & { code?: string };
    // A request the client refused to send (a header value it cannot carry): nothing left, and a retry would not help.
    if (e.code === "UND_ERR_INVALID_ARG" || e.code === "UND_ERR_NOT_SUPPORTED") {
      return { kind: "fail", error: { code: "invalid_request", message: `the request could not be sent (${e.message}): change the step's URL or headers`, permanent: true, notPerformed: true } };
    }
    // A connection that was never made cannot have delivered the request: the effect certainly did not happen.
    const connectTimeout = e.code === "UND_ERR_CONNECT_TIMEOUT";
    const timedOut = e.name === "TimeoutError" || connectTimeout;
    const notPerformed = connectTimeout || ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"].includes(e.code ?? "");
    return { kind: "retry", error: { code: timedOut ? "timeout" : "network", message: e.message, ...(notPerformed ? { notPerformed: true } : {}) } };
  }
  const header = (name: string) => {
    const v = response.headers[name];
    return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
  };
  const output = { status: response.status, body: parseBody(response.text, header("content-type")) };
  if (response.status >= 200 && response.status < 300) return { kind: "done", output };

  const error = { code: `http_${response.status}`, message: `${config.method} ${config.url} answered ${response.status}`, status: response.status };
  if (response.status === 429 || response.status === 408 || response.status === 425 || response.status >= 500) {
    const retryAfterMs = parseRetryAfter(header("retry-after"), header("date"), Date.now());
    // 429, 503 and 425 say the request was refused, not processed; 500, 502, 504 and 408 leave it uncertain.
    const refused = response.status === 429 || response.status === 503 || response.status === 425;
    return { kind: "retry", error: { ...error, ...(refused ? { notPerformed: true } : {}) }, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  // 401/403: the provider refused our credentials and did nothing; the step waits for a reconnect, not a replay.
  const authorisation = response.status === 401 || response.status === 403;
  return { kind: "fail", error: { ...error, permanent: true, authorisation, ...(authorisation ? { notPerformed: true } : {}) } };
}

/** Headers the client frames the request with itself: from a step's config they would contradict the body it sends. */
const framingHeaders = new Set(["content-length", "transfer-encoding", "keep-alive", "upgrade", "expect", "te", "trailer"]);

/**
 * The headers sent, one value a name however it is spelled: a later set replaces an earlier one (the URL's user and
 * password, then the config's, then the connection's credential, then the engine's own), and framing headers are
 * left to the client.
 */
function headerSet(...sets: Record<string, string>[]): Record<string, string> {
  const byName = new Map<string, [string, string]>();
  for (const set of sets) {
    for (const [name, value] of Object.entries(set)) {
      const key = name.toLowerCase();
      if (framingHeaders.has(key)) continue;
      byName.delete(key);
      byName.set(key, [name, value]);
    }
  }
  return Object.fromEntries(byName.values());
}

/** A user and password in the URL go as Basic authorization (as browsers and node:http send them), not in the URL. */
function withoutUserinfo(raw: string): { url: string; basic: string | null } {
  const u = raw.includes("@") ? URL.parse(raw) : null;
  if (!u || (!u.username && !u.password)) return { url: raw, basic: null };
  const basic = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString("base64")}`;
  u.username = "";
  u.password = "";
  return { url: u.href, basic };
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
