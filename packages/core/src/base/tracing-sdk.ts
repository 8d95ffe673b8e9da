import { context, DiagLogLevel, diag, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { Logger } from "./log";

/**
 * The OpenTelemetry SDK, loaded only by `startTracing` (base/tracing.ts) when an OTLP endpoint is configured. The
 * exporter posts JSON to `url` and reads the other standard OTEL_EXPORTER_OTLP_* variables itself (headers, timeout,
 * compression); OTEL_RESOURCE_ATTRIBUTES adds resource attributes.
 */
export function registerSdk(opts: { url: string; serviceName: string; instanceId?: string; scheduleDelayMs?: number; log: Logger }): { shutdown(): Promise<void> } {
  // The exporter's failures (collector away, refused) go to our log, at most once a minute, not once per batch.
  let said = 0;
  const warn = (message: string, ...args: unknown[]) => {
    if (Date.now() - said < 60_000) return;
    said = Date.now();
    let reason = message;
    try {
      reason = (JSON.parse(message) as { message?: string }).message ?? message; // errors come serialised
    } catch {}
    opts.log.warn({ detail: args.map(String).join(" ") || undefined }, `traces not exported: ${reason} (said at most once a minute)`);
  };
  diag.setLogger({ error: warn, warn, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);

  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: opts.serviceName, ...(opts.instanceId ? { "service.instance.id": opts.instanceId } : {}) }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: opts.url }), ...(opts.scheduleDelayMs !== undefined ? { scheduledDelayMillis: opts.scheduleDelayMs } : {}) })],
  });
  // Provider calls find their attempt's span through async context (AsyncLocalStorage).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
