import { registerHooks } from "node:module";

const seen = new Set<string>();
registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    seen.add(r.url);
    return r;
  },
});
const { createLogger, startTracing, tracingEnv, startAttemptSpan } = await import("../src/base/index");
// Every layer's entry loaded, as a process does: none of them may load the SDK while tracing is off.
for (const layer of ["store", "versions", "decide", "providers", "people", "run"]) await import(`../src/${layer}/index`);
const log = createLogger("probe", "silent");
const tracing = await startTracing({ app: "probe", env: tracingEnv.parse(process.env), log });
const span = startAttemptSpan({ orgId: "o", runId: "run_0123456789abcdef0123456789abcdef", stepId: "s", nodeId: "n", kind: "http_request", attempt: 1, effectKey: "k", lane: "io" });
const otel = [...seen].filter((u) => u.includes("@opentelemetry")).map((u) => /@opentelemetry\/([^/]+)/.exec(u)?.[1]);
const api = (globalThis as Record<symbol, Record<string, unknown> | undefined>)[Symbol.for("opentelemetry.js.api.1")];
process.stdout.write(`${JSON.stringify({ enabled: tracing.enabled, span: span !== undefined, packages: [...new Set(otel)].sort(), registered: Object.keys(api ?? {}).filter((k) => k !== "version").sort() })}\n`);
span?.span.end();
await tracing.shutdown();
