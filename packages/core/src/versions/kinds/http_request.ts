import { z } from "zod";
import { defineStepKind } from "./kind";

const attempts = { name: "maxAttempts", label: "Attempts before it fails", help: "Empty: the lane's policy.", advanced: true, widget: { type: "number", min: 1, max: 20 } } as const;

export const httpRequestConfig = z
  .object({
    url: z.url({ protocol: /^https?$/ }),
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("POST"),
    headers: z.record(z.string(), z.string()).default({}),
    /** An HTTP API connection of the organisation: its credential header is added (never plain text in the graph). */
    connection: z.string().min(1).max(100).optional(),
    /** Literal JSON body; when `sendInput` is true the body is `{ input, body }`. */
    body: z.unknown().optional(),
    sendInput: z.boolean().default(false),
    timeoutMs: z.number().int().min(100).max(300_000).default(10_000),
    maxAttempts: z.number().int().min(1).max(20).optional(),
    /**
     * The target honours Idempotency-Key (a repeat with the same key returns the first result), so a call whose
     * outcome is unknown may be re-sent. false: an uncertain call is parked for a person (needs_review).
     */
    idempotent: z.boolean().default(true),
  })
  .strict();
export type HttpRequestConfig = z.infer<typeof httpRequestConfig>;

/** What a call sends as its body: none for GET or when there is nothing to send; `{ input, body }` with sendInput. */
export function httpRequestBody(config: Pick<HttpRequestConfig, "method" | "body" | "sendInput">, input: unknown): { hasBody: boolean; body: unknown } {
  const hasBody = config.method !== "GET" && (config.body !== undefined || config.sendInput);
  return { hasBody, body: hasBody ? (config.sendInput ? { input, body: config.body ?? null } : config.body) : undefined };
}

export const httpRequest = defineStepKind({
  kind: "http_request",
  label: "HTTP request",
  icon: "⇄",
  description: "Calls a web address (a webhook, an API) once per run, with an Idempotency-Key.",
  group: "Actions",
  inline: false,
  lane: "io",
  effect: true,
  waits: false,
  config: httpRequestConfig,
  defaults: { url: "https://example.com/hook", method: "POST" },
  fields: [
    { name: "url", label: "Address (URL)", required: true, widget: { type: "text", format: "url", placeholder: "https://api.example.com/hook" } },
    {
      name: "method",
      label: "Method",
      widget: { type: "select", options: ["GET", "POST", "PUT", "PATCH", "DELETE"].map((m) => ({ value: m, label: m })) },
    },
    {
      name: "connection",
      label: "Credentials",
      help: "An HTTP API connection: its secret header (such as Authorization) is added to the call. Keys never go in the step itself.",
      widget: { type: "connection", kind: "http" },
    },
    { name: "sendInput", label: "Send the run's input as the body", widget: { type: "boolean" } },
    { name: "headers", label: "Headers", help: "Plain, non-secret headers.", advanced: true, widget: { type: "key-values", value: "text", keyLabel: "Header", valueLabel: "Value" } },
    { name: "body", label: "Body (JSON)", advanced: true, widget: { type: "json" } },
    {
      name: "idempotent",
      label: "The target honours Idempotency-Key",
      help: "On: a call whose outcome is unknown (the connection dropped) is sent again, marked as the same request (so a service that recognises repeats acts once). Off: it waits for a person to check (needs review).",
      advanced: true,
      widget: { type: "boolean" },
    },
    { name: "timeoutMs", label: "Timeout", advanced: true, widget: { type: "number", min: 100, max: 300_000, unit: "ms" } },
    attempts,
  ],
  outputs: null,
  output: [
    { path: "status", label: "HTTP status" },
    { path: "body", label: "Response body" },
  ],
  maxAttempts: (c) => c.maxAttempts,
  summary: (c) => `${c.method} ${safeHost(c.url)}${c.connection ? ` with "${c.connection}"` : ""}`,
});

function safeHost(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return url;
  }
}
