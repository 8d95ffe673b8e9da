import { z } from "zod";
import { type AllowList, allowListProblems, parseAllowList } from "./allow-list";

/**
 * HOLDFAST_EGRESS_ALLOW: hosts, IPs or CIDRs (each optionally :port) the egress guard lets through although they
 * are loopback, private or otherwise internal, e.g. "crm.internal,10.1.2.3:8443,[fd00::/8]". Empty: public only.
 */
export const egressAllowSchema = z
  .string()
  .default("")
  .superRefine((text, ctx) => {
    for (const message of allowListProblems(text)) ctx.addIssue({ code: "custom", message });
  })
  .transform((text): AllowList => parseAllowList(text))
  .describe(
    "Exceptions to the egress guard (which refuses loopback, private, link-local and other internal addresses for every outbound call): comma-separated hosts, IPs or CIDRs, each optionally :port, e.g. 127.0.0.1:3000,smtp.internal:25,10.20.0.0/16",
  );

/** An OpenTelemetry variable: empty is unset (as the specification says). */
const otelOptional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema.optional());

/**
 * Traces (base/tracing.ts): the standard OpenTelemetry variables. An endpoint turns the export on; the exporter
 * itself also reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION, and the SDK OTEL_RESOURCE_ATTRIBUTES.
 */
export const tracingEnv = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: otelOptional(z.string().url()).describe(
    "Traces: the OTLP/HTTP receiver (a collector, Jaeger or Tempo on port 4318); unset = no traces and no SDK loaded. The exporter also reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION, the SDK OTEL_RESOURCE_ATTRIBUTES",
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otelOptional(z.string().url()).describe("Traces: the full traces URL, instead of OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces"),
  OTEL_SERVICE_NAME: otelOptional(z.string().min(1)).describe("Traces: the service name; unset = holdfast-<app>"),
  OTEL_SDK_DISABLED: otelOptional(z.enum(["true", "false"]).transform((v) => v === "true")).describe("Traces: true = off even with an endpoint"),
  OTEL_TRACES_EXPORTER: otelOptional(z.enum(["otlp", "none"])).describe("Traces: none = off even with an endpoint"),
  OTEL_BSP_SCHEDULE_DELAY: otelOptional(z.coerce.number().int().min(0).max(600_000)).describe(
    "Traces: how long finished spans wait to be sent in a batch (ms; unset = the SDK's 5000)",
  ),
});

/** Settings every process shares. Each app extends this in its own env.ts and parses once at start-up. */
export const baseEnv = z.object({
  /**
   * Background processes and the CLI connect as holdfast_worker (every organisation's rows, no superuser); the web
   * process as holdfast_web (WEB_DATABASE_URL, row-level security); migrations as MIGRATE_DATABASE_URL's role.
   */
  DATABASE_URL: z
    .string()
    .url()
    .default("postgresql://holdfast_worker@127.0.0.1:5432/holdfast")
    .describe("PostgreSQL for background processes and the CLI, as holdfast_worker (every organisation's rows, not a superuser)"),
  // Through PgBouncer in transaction mode a server connection changes hands between transactions: no named prepared
  // statements and no session settings (the web's row-level security scope is set per transaction), and LISTEN and
  // migrations need a connection of their own (DATABASE_DIRECT_URL).
  DATABASE_POOL_MODE: z
    .enum(["session", "transaction"])
    .default("session")
    .describe("How DATABASE_URL's connections are pooled: session (PostgreSQL, or HAProxy in front of it) or transaction (PgBouncer's transaction mode)"),
  DATABASE_DIRECT_URL: z
    .string()
    .url()
    .optional()
    .describe("A connection that keeps its session (not through a transaction pooler), for LISTEN; needed with DATABASE_POOL_MODE=transaction; unset = DATABASE_URL"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379").describe("Redis, which only wakes workers (BullMQ)"),
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^\s*[^\s,:]+:\d+\s*(,\s*[^\s,:]+:\d+\s*)*$/, "a comma-separated list of host:port, e.g. 10.0.0.1:7000,10.0.0.2:7000")
    .optional()
    .describe("A Redis Cluster instead of REDIS_URL: some of its nodes as host:port, comma-separated (the rest are found from them)"),
  QUEUE_PREFIX: z.string().min(1).default("holdfast").describe("Redis key prefix for BullMQ (one per deployment)"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info").describe("Log level (pino)"),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10).describe("Database connections per process (the web keeps two pools of this size: its pages, its trigger routes)"),
  WAKEUPS: z
    .enum(["redis", "poll"])
    .default("redis")
    .describe("redis: wake-ups through the relay and BullMQ; poll: engine and lane workers poll the outbox (no Redis, no relay, slower)"),
  POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(250).describe("With WAKEUPS=poll: how often consumers poll the outbox (ms)"),
  HOLDFAST_EGRESS_ALLOW: egressAllowSchema,
  ...tracingEnv.shape,
});

/** Parses the environment against `schema`, exiting with a readable list of problems. */
export function loadEnv<S extends z.ZodType>(schema: S, source: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    process.stderr.write(`invalid environment:\n${lines.join("\n")}\n`);
    process.exit(78); // EX_CONFIG
  }
  return parsed.data;
}

/** The egress guard's exceptions from the environment (its module default); a bad entry throws a readable error. */
export function egressAllowFromEnv(source: NodeJS.ProcessEnv = process.env): AllowList {
  const parsed = egressAllowSchema.safeParse(source.HOLDFAST_EGRESS_ALLOW);
  if (!parsed.success) throw new Error(`HOLDFAST_EGRESS_ALLOW: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}
