import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/**
 * A local OTLP/HTTP traces receiver standing in for a collector (Jaeger, Tempo, the OpenTelemetry Collector): it
 * accepts POST /v1/traces with JSON (what @opentelemetry/exporter-trace-otlp-http sends), answers as a collector
 * does, and keeps every span, flattened. Protobuf is refused with 415, so a change of encoding shows up as no spans.
 */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
}

export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  endpoint: string;
  spans(): ReceivedSpan[];
  /** Requests received, and how many were refused (wrong path or encoding). */
  requests(): { accepted: number; refused: number };
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

const value = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? JSON.stringify(v)));
const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  let accepted = 0;
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const type = String(req.headers["content-type"] ?? "");
      if (req.method !== "POST" || req.url !== "/v1/traces" || !type.includes("application/json")) {
        refused++;
        res.writeHead(req.url === "/v1/traces" ? 415 : 404).end();
        return;
      }
      let raw = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") raw = gunzipSync(raw);
      const body = JSON.parse(raw.toString("utf8")) as {
        resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
      };
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)["service.name"] ?? "");
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            const status = (s.status ?? {}) as { code?: number; message?: string };
            received.push({
              service,
              traceId: String(s.traceId),
              spanId: String(s.spanId),
              parentSpanId: String(s.parentSpanId ?? ""),
              name: String(s.name),
              kind: Number(s.kind ?? 0),
              startNs: BigInt(s.startTimeUnixNano as string),
              endNs: BigInt(s.endTimeUnixNano as string),
              attributes: attributesOf(s.attributes as KeyValue[]),
              status: { code: status.code ?? 0, message: status.message ?? "" },
            });
          }
        }
      }
      accepted++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    requests: () => ({ accepted, refused }),
    async waitFor(predicate, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > until) throw new Error(`the OTLP receiver did not get the spans expected within ${timeoutMs} ms (got ${received.length})`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return [...received];
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const statusName = ["unset", "ok", "ERROR"];
const kindName = ["unspecified", "internal", "server", "client", "producer", "consumer"];

/**
 * A readable tree of one trace's spans (children under their parent, by start time), with each span's offset from
 * the first, duration, service, status and attributes; a parent that was never received is named as such.
 */
export function traceSummary(spans: ReceivedSpan[], attributeKeys?: string[]): string {
  if (spans.length === 0) return "(no spans)";
  let t0 = spans[0]!.startNs;
  for (const s of spans) if (s.startNs < t0) t0 = s.startNs; // bigints: Math.min does not take them
  const ms = (ns: bigint) => (Number(ns) / 1e6).toFixed(1);
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, ReceivedSpan[]>();
  for (const s of [...spans].sort((a, b) => (a.startNs < b.startNs ? -1 : 1))) {
    const parent = ids.has(s.parentSpanId) ? s.parentSpanId : `missing:${s.parentSpanId}`;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const lines: string[] = [];
  const print = (s: ReceivedSpan, depth: number) => {
    const pad = "  ".repeat(depth);
    const status = s.status.code === 2 ? `ERROR(${s.status.message})` : statusName[s.status.code];
    lines.push(`${pad}- ${s.name} [${kindName[s.kind] ?? s.kind}] +${ms(s.startNs - t0)} ms, ${ms(s.endNs - s.startNs)} ms, ${s.service}, status ${status}, span ${s.spanId}`);
    const keys = attributeKeys ?? Object.keys(s.attributes).sort();
    for (const k of keys) if (k in s.attributes) lines.push(`${pad}    ${k} = ${JSON.stringify(s.attributes[k])}`);
    for (const c of children.get(s.spanId) ?? []) print(c, depth + 1);
  };
  for (const [parent, roots] of children) {
    if (!parent.startsWith("missing:")) continue;
    const id = parent.slice("missing:".length);
    lines.push(id ? `parent ${id} (not exported)` : "(root)");
    for (const r of roots) print(r, 1);
  }
  return lines.join("\n");
}
