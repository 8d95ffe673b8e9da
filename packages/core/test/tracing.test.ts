import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type HttpTarget, type OtlpReceiver, startHttpTarget, startOtlpReceiver } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/base/log";
import { performHttpRequest } from "../src/providers/effects/http-request";
import { tracingEnv } from "../src/base/env";
import { endAttemptSpan, inAttempt, runSpanId, runTraceId, startAttemptSpan, startTracing, traceProviderCall } from "../src/base/tracing";

/**
 * Traces (base/tracing.ts): the run's trace id is derived from its id; with no endpoint the SDK is never loaded and
 * nothing is registered (checked in a fresh process that records every module it resolves); with one, an attempt's
 * span is a child of the run's derived span and a provider call inside it is the attempt's child.
 */
const here = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);

/** The probe (tracing-modules.probe.ts) in a fresh process: what it loaded and registered. */
async function probe(env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OTEL_")));
  const { stdout } = await run(process.execPath, ["--import", "tsx", join(here, "tracing-modules.probe.ts")], { cwd: join(here, ".."), env: { ...clean, ...env } });
  return JSON.parse(stdout.trim().split("\n").at(-1) as string) as { enabled: boolean; span: boolean; packages: string[]; registered: string[] };
}

describe("trace ids", () => {
  it("a run's trace id is the 32 hex digits of its id; any other id hashes to 32; the run's span id is derived", () => {
    expect(runTraceId("run_0123456789abcdef0123456789abcdef")).toBe("0123456789abcdef0123456789abcdef");
    expect(runTraceId("not-a-run-id")).toMatch(/^[0-9a-f]{32}$/);
    expect(runTraceId("not-a-run-id")).toBe(runTraceId("not-a-run-id"));
    expect(runTraceId("run_00000000000000000000000000000000")).not.toBe("00000000000000000000000000000000");
    expect(runSpanId("run_0123456789abcdef0123456789abcdef")).toMatch(/^[0-9a-f]{16}$/);
    expect(runSpanId("run_0123456789abcdef0123456789abcdef")).toBe(runSpanId("run_0123456789abcdef0123456789abcdef"));
    expect(runSpanId("run_0123456789abcdef0123456789abcdef")).not.toBe(runSpanId("run_1123456789abcdef0123456789abcdef"));
  });
});

describe("with OTEL_EXPORTER_OTLP_ENDPOINT unset", () => {
  it("no SDK module is loaded, no provider, context manager or diag logger is registered, no span is made", async () => {
    const unset = await probe({});
    expect(unset).toEqual({ enabled: false, span: false, packages: ["api"], registered: [] });
    const empty = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: "" });
    expect(empty.packages).toEqual(["api"]);
    const disabled = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "true" });
    expect(disabled).toEqual({ enabled: false, span: false, packages: ["api"], registered: [] });
  });

  it("set, the same probe sees the SDK loaded and registered (so the check above can fail)", async () => {
    const set = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT: "200" });
    expect(set.enabled).toBe(true);
    expect(set.span).toBe(true);
    expect(set.packages).toEqual(expect.arrayContaining(["sdk-trace", "exporter-trace-otlp-http", "context-async-hooks"]));
    expect(set.registered).toEqual(["context", "diag", "trace"]);
  });
});

describe("with an endpoint", () => {
  let receiver: OtlpReceiver;
  let target: HttpTarget;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    target = await startHttpTarget();
  });
  afterAll(async () => {
    await target?.close();
    await receiver?.close();
  });

  it("an attempt is a child of the run's span; its provider call is the attempt's child with the step's attributes; failures carry their code", async () => {
    const env = tracingEnv.parse({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: "holdfast-test" });
    const tracing = await startTracing({ app: "test", env, log: createLogger("test", "silent") });
    expect(tracing.enabled).toBe(true);
    const runId = "run_a1b2c3d4e5f60718293a4b5c6d7e8f90";
    const key = `${runId}/call/1`;
    target.behave({ failFirst: 1, failStatus: 503 });
    const attempt = startAttemptSpan({ orgId: "org_1", runId, stepId: "stp_1", nodeId: "call", kind: "http_request", attempt: 1, effectKey: key, lane: "io" });
    const config = { url: `${target.url}?secret=1`, method: "POST" as const, headers: {}, body: { a: 1 }, sendInput: false, timeoutMs: 5_000, idempotent: true };
    const outcome = await inAttempt(attempt, () => performHttpRequest({ config, idempotencyKey: key, runId, input: null, signal: new AbortController().signal }));
    expect(outcome.kind).toBe("retry");
    endAttemptSpan(attempt, "retry_scheduled", (outcome as { error: unknown }).error);
    // Outside any attempt, a call for a run is a child of the run's span; for no run, it is not traced.
    await traceProviderCall({ provider: "slack", operation: "chat.postMessage", runId }, async () => "ok");
    await traceProviderCall({ provider: "smtp", operation: "login" }, async () => "ok");
    await tracing.shutdown();

    const spans = await receiver.waitFor((s) => s.length >= 3);
    expect(spans.map((s) => s.name).sort()).toEqual(["attempt http_request", "http POST", "slack chat.postMessage"]);
    const [a, call, slack] = ["attempt http_request", "http POST", "slack chat.postMessage"].map((n) => spans.find((s) => s.name === n)!);
    for (const s of spans) {
      expect(s.traceId).toBe("a1b2c3d4e5f60718293a4b5c6d7e8f90");
      expect(s.service).toBe("holdfast-test");
    }
    expect(a!.parentSpanId).toBe(runSpanId(runId));
    expect(call!.parentSpanId).toBe(a!.spanId);
    expect(slack!.parentSpanId).toBe(runSpanId(runId));
    expect(a!.attributes).toMatchObject({
      "holdfast.org_id": "org_1",
      "holdfast.run_id": runId,
      "holdfast.step_id": "stp_1",
      "holdfast.node_id": "call",
      "holdfast.step_kind": "http_request",
      "holdfast.attempt": 1,
      "holdfast.effect_key": key,
      "holdfast.outcome": "retry_scheduled",
      "holdfast.error_code": "http_503",
    });
    expect(a!.status).toEqual({ code: 2, message: "http_503" });
    expect(call!.kind).toBe(3);
    expect(call!.status).toEqual({ code: 2, message: "http_503" });
    expect(call!.attributes).toMatchObject({ "holdfast.step_id": "stp_1", "holdfast.provider": "http", "http.response.status_code": 503, "http.request.method": "POST" });
    // No query string (it may carry secrets) in what is exported.
    expect(call!.attributes["url.full"]).toBe(target.url);
  });
});
