import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runSpanId, runTraceId } from "@holdfast/core/base";
import { ensureAppsBuilt, type HttpTarget, lineGraph, type OtlpReceiver, publish, type ReceivedSpan, startHttpTarget, startOtlpReceiver, startTestDeployment, startTestRun, type TestDeployment, traceSummary, waitFor } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Traces (issue 18 item 6): the engine, the relay and an io lane worker export over OTLP/HTTP to a local receiver. A
 * run with two http_request steps (a one-second wait between them, which the engine fires and walks on), the second
 * answered 503 once, makes one trace whose id is the run's, from two processes: three attempt spans under the run's
 * derived span (the failed one with status ERROR http_503), each with one provider-call span as its child, and the
 * engine's walk after the timer. The received spans are written to e2e/artifacts/trace-dump.txt. A second run goes through the production
 * build (esbuild bundles the SDK) to show the bundle exports too.
 */
const artifacts = join(dirname(fileURLToPath(import.meta.url)), "artifacts");
let d: TestDeployment;
let receiver: OtlpReceiver;
let first: HttpTarget;
let flaky: HttpTarget;

beforeAll(async () => {
  d = await startTestDeployment();
  receiver = d.closeAtStop(await startOtlpReceiver());
  first = d.closeAtStop(await startHttpTarget());
  flaky = d.closeAtStop(await startHttpTarget());
  flaky.behave({ failFirst: 1, failStatus: 503 });
  const graph = lineGraph(
    { id: "start", kind: "trigger", config: { eventIdField: "id" } },
    { id: "call_1", kind: "http_request", config: { url: first.url, method: "POST", body: { step: 1 } } },
    { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 1 } } },
    { id: "call_2", kind: "http_request", config: { url: flaky.url, method: "POST", body: { step: 2 } } },
    { id: "finish", kind: "end" },
  );
  await publish(d.t.db, graph, { automation: "traced" });
});
afterAll(async () => d?.stop());

const env = () => ({
  RELAY_POLL_MS: "200",
  LANE: "io",
  // A quick retry after the 503 (every process reads the same catalog).
  HOLDFAST_LANES: JSON.stringify({ io: { retry: { baseMs: 50, capMs: 200 } } }),
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_BSP_SCHEDULE_DELAY: "100",
});

async function runToCompletion(event: string): Promise<string> {
  const runId = await startTestRun(d.t.db, "traced", { id: event });
  await waitFor(async () => (await d.t.sql.query("SELECT status FROM runs WHERE id = $1", [runId])).rows[0]?.status === "completed", 60_000, "the run to complete");
  return runId;
}

const ofRun = (spans: ReceivedSpan[], runId: string) => spans.filter((s) => s.traceId === runTraceId(runId));
const attempts = (spans: ReceivedSpan[]) => spans.filter((s) => s.name === "attempt http_request");
const calls = (spans: ReceivedSpan[]) => spans.filter((s) => s.attributes["holdfast.provider"] === "http");

describe("traces", () => {
  it("one trace per run: an attempt span per attempt under the run's span, a provider-call span under each, the failed one in error", async () => {
    const apps = await d.startApps([{ app: "relay", env: env() }, { app: "engine", env: env() }, { app: "lane-worker", env: env() }], 60_000);
    for (const a of [apps[1]!, apps[2]!]) expect(a.output()).toContain("exporting traces over OTLP");
    expect(apps[0]!.output()).not.toContain("exporting traces over OTLP"); // the relay does nothing per run

    const runId = await runToCompletion("evt_traced");
    expect(first.calls.get(`${runId}/call_1/1`)).toBe(1);
    expect(flaky.calls.get(`${runId}/call_2/1`)).toBe(2);
    // Stopping flushes what each process still holds.
    await d.stopApps();

    const all = receiver.spans();
    const spans = ofRun(all, runId);
    // Every span about this run is in its trace, and the trace holds nothing else.
    expect(all.filter((s) => s.attributes["holdfast.run_id"] === runId).length).toBe(spans.length);
    for (const s of spans) expect(s.attributes["holdfast.run_id"]).toBe(runId);
    expect(runTraceId(runId)).toBe(runId.slice(4));

    const tried = attempts(spans).sort((a, b) => (a.startNs < b.startNs ? -1 : 1));
    expect(tried.map((s) => [s.attributes["holdfast.node_id"], s.attributes["holdfast.attempt"], s.attributes["holdfast.outcome"]])).toEqual([
      ["call_1", 1, "settled"],
      ["call_2", 1, "retry_scheduled"],
      ["call_2", 2, "settled"],
    ]);
    const [one, failed, retried] = tried as [ReceivedSpan, ReceivedSpan, ReceivedSpan];
    for (const a of tried) {
      expect(a.parentSpanId).toBe(runSpanId(runId));
      expect(a.service).toBe("holdfast-lane-worker");
      expect(a.attributes).toMatchObject({
        "holdfast.org_id": expect.stringMatching(/.+/),
        "holdfast.run_id": runId,
        "holdfast.step_id": expect.stringMatching(/.+/),
        "holdfast.step_kind": "http_request",
        "holdfast.effect_key": `${runId}/${a.attributes["holdfast.node_id"]}/1`,
        "holdfast.lane": "io",
      });
    }
    expect(failed.attributes["holdfast.step_id"]).toBe(retried.attributes["holdfast.step_id"]);
    expect(failed.status).toEqual({ code: 2, message: "http_503" });
    expect(failed.attributes["holdfast.error_code"]).toBe("http_503");
    expect(one.status.code).toBe(0);
    expect(retried.status.code).toBe(0);

    // One provider call per HTTP call, each the child of its attempt, carrying the attempt's attributes.
    const http = calls(spans);
    expect(http.length).toBe(3);
    for (const a of tried) {
      const children = http.filter((c) => c.parentSpanId === a.spanId);
      expect(children.length).toBe(1);
      const [call] = children as [ReceivedSpan];
      expect(call.name).toBe("http POST");
      expect(call.kind).toBe(3);
      expect(call.attributes["holdfast.effect_key"]).toBe(a.attributes["holdfast.effect_key"]);
      expect(call.attributes["holdfast.attempt"]).toBe(a.attributes["holdfast.attempt"]);
      expect(call.attributes["http.response.status_code"]).toBe(a === failed ? 503 : 200);
      expect(call.status.code).toBe(a === failed ? 2 : 0);
      expect(call.startNs >= a.startNs && call.endNs <= a.endNs).toBe(true);
    }
    // The engine's walk after the timer fired is in the same trace, also under the run's span: nothing else is.
    const rest = spans.filter((x) => !tried.includes(x) && !http.includes(x));
    expect(rest.map((s) => [s.name, s.service, s.attributes["holdfast.wake_reason"]])).toContainEqual(["walk", "holdfast-engine", "timer_fired"]);
    for (const s of rest) {
      expect(s.name).toBe("walk");
      expect(s.parentSpanId).toBe(runSpanId(runId));
    }

    mkdirSync(artifacts, { recursive: true });
    const json = JSON.stringify(spans, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2);
    writeFileSync(
      join(artifacts, "trace-dump.txt"),
      [
        `Trace of run ${runId} (e2e/traces.test.ts): engine, relay and an io lane worker exporting over OTLP/HTTP to a local receiver.`,
        `trace id ${runTraceId(runId)} (the run id's hex); the run's span ${runSpanId(runId)} is derived and not exported.`,
        `${spans.length} spans, from ${[...new Set(spans.map((s) => s.service))].join(", ")}`,
        "",
        traceSummary(spans),
        "",
        "Spans as received (OTLP JSON, flattened):",
        json,
        "",
      ].join("\n"),
    );
  });

  it("the production build exports too (the SDK bundled by esbuild)", async () => {
    await ensureAppsBuilt();
    flaky.behave({ failFirst: 0 });
    await d.startApps([{ app: "relay", env: env() }, { app: "engine", env: env(), built: true }, { app: "lane-worker", env: env(), built: true }], 60_000);
    const runId = await runToCompletion("evt_traced_built");
    const spans = await receiver.waitFor((all) => attempts(ofRun(all, runId)).length === 2 && calls(ofRun(all, runId)).length === 2, 30_000);
    expect(attempts(ofRun(spans, runId)).every((a) => a.parentSpanId === runSpanId(runId) && a.status.code === 0)).toBe(true);
    await d.stopApps();
  });
});
