import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP CRM on 127.0.0.1 speaking the protocol crm_upsert uses: `PUT /objects/{object}/records/{externalId}`
 * upserts (201 created, 200 updated) the record named by the external id (the node's match key, such as the
 * contact's email); a PUT whose `Idempotency-Key` already wrote is answered with its first answer and not applied
 * again, as real providers do. `GET /objects/{object}/records?externalId=` searches by id, `?idempotencyKey=` finds
 * the record a key wrote. Bearer tokens name the connected account; it records calls, records, and the most calls in
 * flight per token (for caps).
 */
export interface CrmTarget {
  baseUrl: string;
  /** The CRM's records, by external id (the match key). */
  records: Map<string, { externalId: string; fields: Record<string, unknown>; version: number }>;
  /** PUT calls received per Idempotency-Key (the effect key; the external id when a call sent none). */
  upserts: Map<string, number>;
  /** Writes applied, per Idempotency-Key: the record each key wrote (a repeated key is answered, not applied). */
  writes: Map<string, string>;
  maxInFlight(token: string): number;
  setTokens(tokens: string[]): void;
  behave(b: Partial<{ delayMs: number; failFirst: number; failStatus: number; retryAfter: string }>): void;
  close(): Promise<void>;
}

export async function startCrmTarget(tokens: string[] = ["crm-token"]): Promise<CrmTarget> {
  let allowed = new Set(tokens);
  const records: CrmTarget["records"] = new Map();
  const upserts = new Map<string, number>();
  const writes = new Map<string, string>();
  const answers = new Map<string, { status: number; body: unknown }>();
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  let behaviour = { delayMs: 0, failFirst: 0, failStatus: 503, retryAfter: undefined as string | undefined };
  const server: Server = createServer(async (req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    const body = await new Promise<string>((resolve) => {
      let data = "";
      req.on("data", (c) => (data += c));
      req.on("end", () => resolve(data));
    });
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    if (!allowed.has(token)) return send(401, { error: "invalid token" });
    const n = (inFlight.get(token) ?? 0) + 1;
    inFlight.set(token, n);
    maxInFlight.set(token, Math.max(maxInFlight.get(token) ?? 0, n));
    try {
      if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
      const url = new URL(req.url ?? "/", "http://crm");
      const put = /^\/objects\/([^/]+)\/records\/([^/]+)$/.exec(url.pathname);
      if (req.method === "PUT" && put) {
        const externalId = decodeURIComponent(put[2] as string);
        const idempotencyKey = String(req.headers["idempotency-key"] ?? "") || externalId;
        const count = (upserts.get(idempotencyKey) ?? 0) + 1;
        upserts.set(idempotencyKey, count);
        if (count <= behaviour.failFirst) return send(behaviour.failStatus, { error: "busy" }, behaviour.retryAfter ? { "retry-after": behaviour.retryAfter } : {});
        const answered = answers.get(idempotencyKey);
        if (answered) return send(answered.status, answered.body, { "idempotent-replayed": "true" });
        const fields = (JSON.parse(body || "{}") as { fields?: Record<string, unknown> }).fields ?? {};
        const existing = records.get(externalId);
        const record = { externalId, fields: { ...existing?.fields, ...fields }, version: (existing?.version ?? 0) + 1 };
        records.set(externalId, record);
        writes.set(idempotencyKey, externalId);
        const answer = { status: existing ? 200 : 201, body: { id: `rec_${externalId}`, ...record } };
        answers.set(idempotencyKey, answer);
        return send(answer.status, answer.body);
      }
      const list = /^\/objects\/([^/]+)\/records$/.exec(url.pathname);
      if (req.method === "GET" && list) {
        const byKey = url.searchParams.get("idempotencyKey");
        const externalId = byKey !== null ? (writes.get(byKey) ?? "") : (url.searchParams.get("externalId") ?? "");
        const record = records.get(externalId);
        return send(200, { records: record ? [{ id: `rec_${externalId}`, ...record }] : [] });
      }
      return send(404, { error: "not found" });
    } finally {
      inFlight.set(token, (inFlight.get(token) ?? 1) - 1);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    records,
    upserts,
    writes,
    maxInFlight: (token) => maxInFlight.get(token) ?? 0,
    setTokens(t) {
      allowed = new Set(t);
    },
    behave(b) {
      behaviour = { ...behaviour, ...b };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
