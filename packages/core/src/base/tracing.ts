import { createHash } from "node:crypto";
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
} from "@opentelemetry/api";
import type { Logger } from "./log";

/**
 * Traces (OpenTelemetry): one trace per run, whichever process works on it. The trace id is the run id's 32 hex
 * digits and every step attempt is a child of the run's span, whose id is derived from the run id too, so the lane
 * workers and the engine put their spans into the same trace without passing any context through the queue. The
 * run's own span is never exported (it has no single process that sees it begin and end): backends show the attempts
 * under a parent they never received.
 *
 * Off unless this process called `startTracing` with an OTLP endpoint: then every helper here is one boolean test and
 * a direct call, no span object is made, and the SDK is never loaded (only the API, whose global tracer is a no-op).
 */

let tracing = false;
const tracerName = "holdfast";
const tracer = () => trace.getTracer(tracerName);

/** Span attribute names, one place. */
export const traceAttr = {
  org: "holdfast.org_id",
  run: "holdfast.run_id",
  step: "holdfast.step_id",
  node: "holdfast.node_id",
  kind: "holdfast.step_kind",
  attempt: "holdfast.attempt",
  effectKey: "holdfast.effect_key",
  lane: "holdfast.lane",
  outcome: "holdfast.outcome",
  errorCode: "holdfast.error_code",
  provider: "holdfast.provider",
} as const;

/** True once this process exports traces. */
export const isTracing = (): boolean => tracing;

/** The run's trace id: the 32 hex digits of `run_<32 hex>`; any other id is hashed down to 32. */
export function runTraceId(runId: string): string {
  const hex = /^run_([0-9a-f]{32})$/.exec(runId)?.[1];
  return hex && !/^0+$/.test(hex) ? hex : createHash("sha256").update(runId).digest("hex").slice(0, 32);
}

/** The id of the run's span, the parent of its attempts: derived, so every process names the same one. */
export function runSpanId(runId: string): string {
  return createHash("sha256").update(`holdfast run span ${runId}`).digest("hex").slice(0, 16);
}

/** A context whose (remote, never exported) span is the run's: spans started under it join the run's trace. */
export function runContext(runId: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: runTraceId(runId), spanId: runSpanId(runId), traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

export interface AttemptFacts {
  orgId: string;
  runId: string;
  stepId: string;
  nodeId: string;
  kind: string;
  attempt: number;
  effectKey: string;
  lane: string;
}

/** An attempt's span and the context its provider calls run in (they copy its step attributes). */
export interface AttemptSpan {
  span: Span;
  context: Context;
}

const stepAttributesKey = createContextKey("holdfast step attributes");

/** Starts the span of one step attempt; undefined (and nothing made) when tracing is off. */
export function startAttemptSpan(facts: AttemptFacts): AttemptSpan | undefined {
  if (!tracing) return undefined;
  const attributes: Attributes = {
    [traceAttr.org]: facts.orgId,
    [traceAttr.run]: facts.runId,
    [traceAttr.step]: facts.stepId,
    [traceAttr.node]: facts.nodeId,
    [traceAttr.kind]: facts.kind,
    [traceAttr.attempt]: facts.attempt,
    [traceAttr.effectKey]: facts.effectKey,
    [traceAttr.lane]: facts.lane,
  };
  const parent = runContext(facts.runId);
  const span = tracer().startSpan(`attempt ${facts.kind}`, { kind: SpanKind.INTERNAL, attributes }, parent);
  return { span, context: trace.setSpan(parent, span).setValue(stepAttributesKey, attributes) };
}

/** Runs `fn` inside the attempt's span (its provider calls become children); a plain call when there is none. */
export function inAttempt<T>(attempt: AttemptSpan | undefined, fn: () => T): T {
  return attempt ? context.with(attempt.context, fn) : fn();
}

/**
 * Ends the attempt's span with what became of it (settled, retry_scheduled, parked, failed, deferred, lease_lost...).
 * A step error (the settle's `error`) or a thrown error makes the status ERROR, named by the error's code.
 */
export function endAttemptSpan(attempt: AttemptSpan | undefined, outcome: string, error?: unknown): void {
  if (!attempt) return;
  attempt.span.setAttribute(traceAttr.outcome, outcome);
  if (error !== undefined && error !== null) markError(attempt.span, error);
  attempt.span.end();
}

/** The code of a step error ({code, message}), or of a thrown error ("thrown" when it has none). */
function markError(span: Span, error: unknown): void {
  const thrown = error instanceof Error;
  const code = (error as { code?: unknown }).code;
  const name = typeof code === "string" && code ? code : thrown ? "thrown" : "error";
  if (thrown) span.recordException(error);
  span.setAttributes({ [traceAttr.errorCode]: name, "error.type": name });
  span.setStatus({ code: SpanStatusCode.ERROR, message: name });
}

export interface ProviderCall {
  /** Which provider: http (http_request), crm, model, smtp, slack. */
  provider: string;
  /** What was asked of it: the HTTP method, "send", the Slack API method. */
  operation: string;
  /** The run the call is for: its trace when no attempt span is active (approval messages). */
  runId?: string;
  effectKey?: string;
  attributes?: Attributes;
}

/** A provider's outcome that is a failure: the outcome kinds that carry a step error. */
export function failedOutcomeCode(outcome: { kind: string; error?: unknown }): { code: string } | undefined {
  if (outcome.kind !== "retry" && outcome.kind !== "fail" && outcome.kind !== "park") return undefined;
  const code = (outcome.error as { code?: unknown } | undefined)?.code;
  return { code: typeof code === "string" ? code : outcome.kind };
}

/**
 * One call to a provider as a CLIENT span: a child of the step attempt in progress (with its step attributes), else
 * of the run's span; not traced outside any run (connection tests). `failure` names the code of an answer that is a
 * failure without throwing (a 503, an SMTP refusal); a throw is one too.
 */
export async function traceProviderCall<T>(call: ProviderCall, fn: (span: Span | undefined) => Promise<T>, failure?: (result: T) => { code: string } | undefined): Promise<T> {
  if (!tracing) return fn(undefined);
  const active = context.active();
  const parent = trace.getSpan(active) ? active : call.runId ? runContext(call.runId) : undefined;
  if (!parent) return fn(undefined);
  const attributes: Attributes = {
    ...((active.getValue(stepAttributesKey) as Attributes | undefined) ?? (call.runId ? { [traceAttr.run]: call.runId } : {})),
    [traceAttr.provider]: call.provider,
    ...(call.effectKey ? { [traceAttr.effectKey]: call.effectKey } : {}),
    ...call.attributes,
  };
  const span = tracer().startSpan(`${call.provider} ${call.operation}`, { kind: SpanKind.CLIENT, attributes }, parent);
  try {
    const result = await context.with(trace.setSpan(parent, span), () => fn(span));
    const failed = failure?.(result);
    if (failed) markError(span, failed);
    return result;
  } catch (error) {
    markError(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Work on a run outside any step attempt (the engine's walk after a wake-up or a timer) as a span of the run's trace.
 * `describe` adds attributes from the result.
 */
export async function traceRunWork<T>(
  name: string,
  run: { orgId: string; runId: string; attributes?: Attributes },
  fn: () => Promise<T>,
  describe?: (result: T) => Attributes,
): Promise<T> {
  if (!tracing) return fn();
  const attributes: Attributes = { [traceAttr.org]: run.orgId, [traceAttr.run]: run.runId, ...run.attributes };
  const span = tracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes }, runContext(run.runId));
  try {
    const result = await context.with(trace.setSpan(runContext(run.runId), span), fn);
    if (describe) span.setAttributes(describe(result));
    return result;
  } catch (error) {
    markError(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * A span of work on a run that is already done, from `startedAt` to `endedAt` (epoch ms): one run's part of a batch
 * that walked many at once (the engine's batched timers), which has no function of its own to wrap.
 */
export function recordRunWork(name: string, run: { orgId: string; runId: string; attributes?: Attributes }, startedAt: number, endedAt: number): void {
  if (!tracing) return;
  const attributes: Attributes = { [traceAttr.org]: run.orgId, [traceAttr.run]: run.runId, ...run.attributes };
  tracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes, startTime: startedAt }, runContext(run.runId)).end(endedAt);
}

/** Tracing settings (the standard OpenTelemetry variables), validated with the rest of each app's environment. */
export interface TracingEnv {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_SERVICE_NAME?: string | undefined;
  OTEL_SDK_DISABLED?: boolean | undefined;
  OTEL_TRACES_EXPORTER?: string | undefined;
  OTEL_BSP_SCHEDULE_DELAY?: number | undefined;
}

export interface Tracing {
  enabled: boolean;
  /** Exports what is buffered and stops: call on shutdown, after the last step settled. */
  shutdown(): Promise<void>;
}

const off: Tracing = { enabled: false, shutdown: async () => {} };

/**
 * Once per process, at start-up: with OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) set, loads the SDK,
 * registers it and exports over OTLP/HTTP (JSON) as service OTEL_SERVICE_NAME, default holdfast-<app>. Unset, it
 * loads nothing and the helpers above stay plain calls.
 */
export async function startTracing(opts: { app: string; env: TracingEnv; log: Logger; instanceId?: string }): Promise<Tracing> {
  const { env } = opts;
  // As the specification says: the traces endpoint is used as given, the general one gets /v1/traces appended.
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT && `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, "")}/v1/traces`);
  if (!endpoint || env.OTEL_SDK_DISABLED || env.OTEL_TRACES_EXPORTER === "none" || tracing) return off;
  const { registerSdk } = await import("./tracing-sdk");
  const serviceName = env.OTEL_SERVICE_NAME ?? `holdfast-${opts.app}`;
  const sdk = registerSdk({ url: endpoint, serviceName, log: opts.log, ...(opts.instanceId ? { instanceId: opts.instanceId } : {}), ...(env.OTEL_BSP_SCHEDULE_DELAY !== undefined ? { scheduleDelayMs: env.OTEL_BSP_SCHEDULE_DELAY } : {}) });
  tracing = true;
  opts.log.info({ endpoint, serviceName }, "exporting traces over OTLP");
  return {
    enabled: true,
    async shutdown() {
      tracing = false;
      await sdk.shutdown().catch((error) => opts.log.warn({ err: error }, "traces not all exported at shutdown"));
    },
  };
}
